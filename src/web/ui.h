// Serves the web console (docs/web.md): GET /ui/ answers index.html and GET /ui/assets/NAME each
// embedded file, with its Content-Type, an ETag (304 to a matching If-None-Match), and the
// security headers every page gets: a strict Content-Security-Policy (nothing from another
// origin, no inline script or style), nosniff, no referrer, no framing.
//
// The pages are static and public; the data they show comes from /v1 with the caller's own
// credential, so serving them needs none.
//
// Thread safety: pure functions over the immutable asset table.
#ifndef BERTH_WEB_UI_H_
#define BERTH_WEB_UI_H_

#include <string_view>

#include "net/http.h"

namespace berth::web {

inline constexpr std::string_view kContentSecurityPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

// The Content-Type of an asset, from its name's extension.
std::string_view ContentTypeOf(std::string_view name);

// The asset `name` ("" or "index.html": the console's page). Unknown: 404 with a JSON error.
net::HttpResponse ServeAsset(const net::HttpRequest& req, std::string_view name);

}  // namespace berth::web

#endif  // BERTH_WEB_UI_H_

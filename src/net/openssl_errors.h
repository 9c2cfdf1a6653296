// What OpenSSL's error queue holds, for berth's TLS, PKI and token code (src/net only).
#ifndef BERTH_NET_OPENSSL_ERRORS_H_
#define BERTH_NET_OPENSSL_ERRORS_H_

#include <string>

namespace berth::net {

// Drains the calling thread's OpenSSL error queue into one line ("unknown OpenSSL error" when
// it is empty), for a Status message.
std::string OpenSslErrors();

}  // namespace berth::net

#endif  // BERTH_NET_OPENSSL_ERRORS_H_

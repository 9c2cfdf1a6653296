// The controller's own small PKI: a CA and a serving certificate signed by it, made on first start
// and reused afterwards, so that a kubeconfig can pin the CA (certificate-authority-data) and
// clients verify the server the usual way. Keys are ECDSA P-256; key files are mode 0600.
//
// Thread safety: the functions are thread-safe, but two processes must not run EnsurePki on the
// same folder at once (the controller holds its state folder alone).
#ifndef BERTH_NET_TLS_PKI_H_
#define BERTH_NET_TLS_PKI_H_

#include <string>
#include <vector>

#include "common/status.h"

namespace berth::net {

struct PkiFiles {
  std::string ca_cert;  // PEM
  std::string ca_key;   // PEM, 0600
  std::string cert;     // PEM, the serving certificate
  std::string key;      // PEM, 0600
};

// The file names EnsurePki uses in `dir`: ca.crt, ca.key, server.crt, server.key.
PkiFiles PkiFilesIn(const std::string& dir);

// Makes `dir` (0755) and, where missing, the CA (10 years) and a serving certificate (2 years)
// whose subjectAltNames are `dns_names` and `ips` (IPv4 or IPv6 text). Files already there are
// reused as they are; a missing CA means a new CA and a new serving certificate. Errors name the
// file and what failed.
Result<PkiFiles> EnsurePki(const std::string& dir, const std::vector<std::string>& dns_names,
                           const std::vector<std::string>& ips);

// The subjectAltNames that a local controller's serving certificate carries: localhost,
// 127.0.0.1, ::1, and this machine's host name.
void DefaultServingNames(std::vector<std::string>* dns_names, std::vector<std::string>* ips);

// Checks that the certificate at cert_path was issued by the CA at ca_cert_path and is valid
// now (OpenSSL's chain verification with the CA as the only trust anchor).
Status VerifyCertificate(const std::string& ca_cert_path, const std::string& cert_path);

// The certificate's subjectAltNames as "DNS:name" and "IP:address".
Result<std::vector<std::string>> CertificateAltNames(const std::string& cert_path);

// The whole file, for PEM data (a missing file is NOT_FOUND).
Result<std::string> ReadTextFile(const std::string& path);

// Writes `data` to `path` through a temporary file and rename, with the given mode.
Status WriteFileAtomically(const std::string& path, const std::string& data, unsigned mode);

}  // namespace berth::net

#endif  // BERTH_NET_TLS_PKI_H_

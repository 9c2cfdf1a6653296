// EnsurePki and its helpers (see tls_pki.h), with OpenSSL 3's EVP and X509 APIs.
#include "net/tls_pki.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include "net/openssl_errors.h"
#include "net/socket_io.h"

namespace berth::net {

std::string OpenSslErrors() {
  std::string out;
  unsigned long e;
  while ((e = ERR_get_error()) != 0) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? "unknown OpenSSL error" : out;
}

namespace {

constexpr long kCaDays = 3650;
constexpr long kServingDays = 730;

struct Free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(BIGNUM* p) const { BN_free(p); }
  void operator()(X509_STORE* p) const { X509_STORE_free(p); }
  void operator()(X509_STORE_CTX* p) const { X509_STORE_CTX_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
  void operator()(GENERAL_NAMES* p) const { GENERAL_NAMES_free(p); }
};
template <typename T>
using Owned = std::unique_ptr<T, Free>;

bool Exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

Result<Owned<X509>> LoadCert(const std::string& path) {
  BERTH_ASSIGN_OR_RETURN(std::string pem, ReadTextFile(path));
  Owned<BIO> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  Owned<X509> cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) return Status::InvalidArgument(path + ": not a PEM certificate: " + OpenSslErrors());
  return cert;
}

Result<Owned<EVP_PKEY>> LoadKey(const std::string& path) {
  BERTH_ASSIGN_OR_RETURN(std::string pem, ReadTextFile(path));
  Owned<BIO> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  Owned<EVP_PKEY> key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key) return Status::InvalidArgument(path + ": not a PEM private key: " + OpenSslErrors());
  return key;
}

Result<Owned<EVP_PKEY>> NewKey() {
  Owned<EVP_PKEY> key(EVP_EC_gen("P-256"));
  if (!key) return Status::Internal("cannot make an EC key: " + OpenSslErrors());
  return key;
}

Status WritePem(const std::string& path, X509* cert, EVP_PKEY* key) {
  Owned<BIO> bio(BIO_new(BIO_s_mem()));
  int ok = cert != nullptr
               ? PEM_write_bio_X509(bio.get(), cert)
               : PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
  if (ok != 1) return Status::Internal("PEM encoding for " + path + ": " + OpenSslErrors());
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  return WriteFileAtomically(path, std::string(data, static_cast<size_t>(len)),
                             cert != nullptr ? 0644 : 0600);
}

Status AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  Owned<X509_EXTENSION> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
  if (!ext || X509_add_ext(cert, ext.get(), -1) != 1) {
    return Status::Internal("certificate extension " + value + ": " + OpenSslErrors());
  }
  return Status::Ok();
}

// A v3 certificate for `key`, valid from an hour ago for `days`, with a random serial number.
Result<Owned<X509>> NewCert(EVP_PKEY* key, const std::string& common_name, long days) {
  Owned<X509> cert(X509_new());
  unsigned char serial_bytes[16];
  if (!cert || RAND_bytes(serial_bytes, sizeof(serial_bytes)) != 1) {
    return Status::Internal("cannot make a certificate: " + OpenSslErrors());
  }
  serial_bytes[0] &= 0x7f;  // positive
  Owned<BIGNUM> serial(BN_bin2bn(serial_bytes, sizeof(serial_bytes), nullptr));
  X509_set_version(cert.get(), 2);
  BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get()));
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), days * 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("berth"), -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1,
                             0);
  return cert;
}

std::string HostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof(buf) - 1) != 0) return "";
  return buf;
}

Status MakeCa(const PkiFiles& f) {
  BERTH_ASSIGN_OR_RETURN(Owned<EVP_PKEY> key, NewKey());
  BERTH_ASSIGN_OR_RETURN(Owned<X509> cert, NewCert(key.get(), "berth-ca@" + HostName(), kCaDays));
  X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get()));
  BERTH_RETURN_IF_ERROR(
      AddExtension(cert.get(), cert.get(), NID_basic_constraints, "critical,CA:TRUE,pathlen:0"));
  BERTH_RETURN_IF_ERROR(
      AddExtension(cert.get(), cert.get(), NID_key_usage, "critical,keyCertSign,cRLSign"));
  BERTH_RETURN_IF_ERROR(AddExtension(cert.get(), cert.get(), NID_subject_key_identifier, "hash"));
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) {
    return Status::Internal("cannot sign the CA certificate: " + OpenSslErrors());
  }
  BERTH_RETURN_IF_ERROR(WritePem(f.ca_key, nullptr, key.get()));
  return WritePem(f.ca_cert, cert.get(), nullptr);
}

Status MakeServing(const PkiFiles& f, const std::vector<std::string>& dns_names,
                   const std::vector<std::string>& ips) {
  BERTH_ASSIGN_OR_RETURN(Owned<X509> ca, LoadCert(f.ca_cert));
  BERTH_ASSIGN_OR_RETURN(Owned<EVP_PKEY> ca_key, LoadKey(f.ca_key));
  BERTH_ASSIGN_OR_RETURN(Owned<EVP_PKEY> key, NewKey());
  std::string cn = dns_names.empty() ? "berth" : dns_names.front();
  BERTH_ASSIGN_OR_RETURN(Owned<X509> cert, NewCert(key.get(), cn, kServingDays));
  X509_set_issuer_name(cert.get(), X509_get_subject_name(ca.get()));
  std::string sans;
  for (const std::string& d : dns_names) sans += (sans.empty() ? "DNS:" : ",DNS:") + d;
  for (const std::string& ip : ips) sans += (sans.empty() ? "IP:" : ",IP:") + ip;
  BERTH_RETURN_IF_ERROR(
      AddExtension(cert.get(), ca.get(), NID_basic_constraints, "critical,CA:FALSE"));
  BERTH_RETURN_IF_ERROR(AddExtension(cert.get(), ca.get(), NID_key_usage,
                                     "critical,digitalSignature,keyEncipherment"));
  BERTH_RETURN_IF_ERROR(AddExtension(cert.get(), ca.get(), NID_ext_key_usage, "serverAuth"));
  BERTH_RETURN_IF_ERROR(
      AddExtension(cert.get(), ca.get(), NID_authority_key_identifier, "keyid:always"));
  if (!sans.empty()) {
    BERTH_RETURN_IF_ERROR(AddExtension(cert.get(), ca.get(), NID_subject_alt_name, sans));
  }
  if (X509_sign(cert.get(), ca_key.get(), EVP_sha256()) == 0) {
    return Status::Internal("cannot sign the serving certificate: " + OpenSslErrors());
  }
  BERTH_RETURN_IF_ERROR(WritePem(f.key, nullptr, key.get()));
  return WritePem(f.cert, cert.get(), nullptr);
}

}  // namespace

PkiFiles PkiFilesIn(const std::string& dir) {
  return PkiFiles{dir + "/ca.crt", dir + "/ca.key", dir + "/server.crt", dir + "/server.key"};
}

Result<PkiFiles> EnsurePki(const std::string& dir, const std::vector<std::string>& dns_names,
                           const std::vector<std::string>& ips) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return Status::Unavailable(ErrnoMessage("mkdir " + dir, errno));
  }
  ERR_clear_error();
  PkiFiles f = PkiFilesIn(dir);
  bool new_ca = false;
  if (!Exists(f.ca_cert) || !Exists(f.ca_key)) {
    BERTH_RETURN_IF_ERROR(MakeCa(f));
    new_ca = true;
  }
  bool reissue = new_ca || !Exists(f.cert) || !Exists(f.key);
  if (!reissue) {
    // A serving certificate that lacks a name asked for now (a new --tls-san) is made again,
    // under the same CA, so clients that pinned the CA keep trusting it.
    Result<std::vector<std::string>> have = CertificateAltNames(f.cert);
    if (!have.ok()) return have.status();
    auto has = [&](const std::string& n) {
      return std::find(have->begin(), have->end(), n) != have->end();
    };
    for (const std::string& n : dns_names) reissue = reissue || !has("DNS:" + n);
    for (const std::string& n : ips) reissue = reissue || !has("IP:" + n);
  }
  if (reissue) BERTH_RETURN_IF_ERROR(MakeServing(f, dns_names, ips));
  return f;
}

void DefaultServingNames(std::vector<std::string>* dns_names, std::vector<std::string>* ips) {
  dns_names->assign({"localhost"});
  std::string host = HostName();
  if (!host.empty() && host != "localhost") dns_names->push_back(host);
  ips->assign({"127.0.0.1", "::1"});
}

Status VerifyCertificate(const std::string& ca_cert_path, const std::string& cert_path) {
  ERR_clear_error();
  BERTH_ASSIGN_OR_RETURN(Owned<X509> ca, LoadCert(ca_cert_path));
  BERTH_ASSIGN_OR_RETURN(Owned<X509> cert, LoadCert(cert_path));
  Owned<X509_STORE> store(X509_STORE_new());
  Owned<X509_STORE_CTX> ctx(X509_STORE_CTX_new());
  if (!store || !ctx || X509_STORE_add_cert(store.get(), ca.get()) != 1 ||
      X509_STORE_CTX_init(ctx.get(), store.get(), cert.get(), nullptr) != 1) {
    return Status::Internal("cannot set up verification: " + OpenSslErrors());
  }
  if (X509_verify_cert(ctx.get()) != 1) {
    return Status::InvalidArgument(
        cert_path + " does not verify against " + ca_cert_path + ": " +
        X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx.get())));
  }
  return Status::Ok();
}

Result<std::vector<std::string>> CertificateAltNames(const std::string& cert_path) {
  BERTH_ASSIGN_OR_RETURN(Owned<X509> cert, LoadCert(cert_path));
  Owned<GENERAL_NAMES> names(static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(cert.get(), NID_subject_alt_name, nullptr, nullptr)));
  std::vector<std::string> out;
  for (int i = 0; names && i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* n = sk_GENERAL_NAME_value(names.get(), i);
    if (n->type == GEN_DNS) {
      const ASN1_STRING* s = n->d.dNSName;
      out.push_back("DNS:" + std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                                         static_cast<size_t>(ASN1_STRING_length(s))));
    } else if (n->type == GEN_IPADD) {
      const ASN1_OCTET_STRING* s = n->d.iPAddress;
      char text[INET6_ADDRSTRLEN] = {};
      int family = ASN1_STRING_length(s) == 4 ? AF_INET : AF_INET6;
      ::inet_ntop(family, ASN1_STRING_get0_data(s), text, sizeof(text));
      out.push_back(std::string("IP:") + text);
    }
  }
  return out;
}

Result<std::string> ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status WriteFileAtomically(const std::string& path, const std::string& data, unsigned mode) {
  std::string tmp = path + ".tmp";
  ::unlink(tmp.c_str());
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode));
  if (!fd.valid()) return Status::Unavailable(ErrnoMessage("create " + tmp, errno));
  ::fchmod(fd.get(), mode);  // whatever the umask said
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd.get(), data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::Unavailable(ErrnoMessage("write " + tmp, errno));
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd.get()) != 0) return Status::Unavailable(ErrnoMessage("fsync " + tmp, errno));
  fd.Reset();
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    return Status::Unavailable(ErrnoMessage("rename " + tmp, errno));
  }
  return Status::Ok();
}

}  // namespace berth::net

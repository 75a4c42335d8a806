// The C side of package zbxpsk: one TLS connection with a pre-shared key
// over OpenSSL, driven through two memory BIOs so that Go does all the
// socket I/O. See openssl.go for the contract; nothing here keeps a Go
// pointer beyond the call it was passed to.

#ifndef PEREGRINE_PGPSK_H
#define PEREGRINE_PGPSK_H

#include <stddef.h>
#include <stdint.h>
#include <openssl/ssl.h>

// The largest identity and key OpenSSL's PSK callbacks carry.
#define PGPSK_MAX_IDENTITY PSK_MAX_IDENTITY_LEN
#define PGPSK_MAX_KEY 256 // 512 hexadecimal digits, Zabbix's longest tls_psk

typedef struct pgpsk_conn pgpsk_conn;

// The outcome of one TLS operation, read in the same call (OpenSSL's
// error queue is per thread, and a goroutine may change threads between
// two cgo calls).
typedef struct {
	int ret;            // the operation's return value
	int ssl_error;      // SSL_get_error of it (SSL_ERROR_NONE when ret > 0)
	unsigned long err;  // the first error queued by the operation, or 0
} pgpsk_res;

SSL_CTX *pgpsk_ctx_new(int server, unsigned long *err);

pgpsk_conn *pgpsk_new(SSL_CTX *ctx, int server, const char *identity, size_t identity_len,
		      const unsigned char *key, size_t key_len, unsigned long *err);
void pgpsk_free(pgpsk_conn *c);
void pgpsk_set_handle(pgpsk_conn *c, uintptr_t h);

int pgpsk_feed(pgpsk_conn *c, const void *buf, int n);
int pgpsk_drain(pgpsk_conn *c, void *buf, int n);
size_t pgpsk_pending(pgpsk_conn *c);

void pgpsk_handshake(pgpsk_conn *c, pgpsk_res *r);
void pgpsk_read(pgpsk_conn *c, void *buf, int n, pgpsk_res *r);
void pgpsk_write(pgpsk_conn *c, const void *buf, int n, pgpsk_res *r);
void pgpsk_shutdown(pgpsk_conn *c);

const char *pgpsk_version(pgpsk_conn *c);
const char *pgpsk_cipher(pgpsk_conn *c);
int pgpsk_reason(unsigned long e);
// Tests only: narrow one connection's suites or protocol versions.
int pgpsk_restrict(pgpsk_conn *c, const char *ciphers, const char *ciphers13, int max_version);
void pgpsk_error_string(unsigned long e, char *buf, size_t n);

#endif

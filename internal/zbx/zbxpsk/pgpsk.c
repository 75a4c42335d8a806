//go:build cgo && !nopsk

// The C side of package zbxpsk. Kept to what cannot be done from Go:
// OpenSSL's callbacks, its macros, and reading its per-thread error queue
// in the same call as the operation that filled it.

#include <stdlib.h>
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include "pgpsk.h"
#include "_cgo_export.h"

// The suites Zabbix 6.0 offers and accepts with a pre-shared key when
// built with OpenSSL (recorded from zabbix_agent2 6.0.14's ClientHello:
// 0x1303 0x1301, then c037 c035 00a8 c0a8 c0a4 00ae 008c), which is what
// these two OpenSSL strings expand to.
#define PGPSK_CIPHERS13 "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256"
#define PGPSK_CIPHERS "kECDHEPSK+AES128:kPSK+AES128"

struct pgpsk_conn {
	SSL *ssl;
	// handle is the Go connection (a runtime/cgo.Handle) while a server
	// handshake runs, for the key callback; 0 otherwise.
	uintptr_t handle;
	// The client's identity (NUL-terminated) and key, copied in at
	// creation and wiped at free.
	char identity[PGPSK_MAX_IDENTITY + 1];
	unsigned char key[PGPSK_MAX_KEY];
	unsigned int key_len;
};

static unsigned int client_cb(SSL *ssl, const char *hint, char *identity, unsigned int max_identity_len,
			      unsigned char *psk, unsigned int max_psk_len)
{
	pgpsk_conn *c = SSL_get_app_data(ssl);
	size_t n;

	(void)hint;
	if (c == NULL)
		return 0;
	n = strlen(c->identity);
	if (n + 1 > max_identity_len || c->key_len > max_psk_len)
		return 0;
	memcpy(identity, c->identity, n + 1);
	memcpy(psk, c->key, c->key_len);
	return c->key_len;
}

static unsigned int server_cb(SSL *ssl, const char *identity, unsigned char *psk, unsigned int max_psk_len)
{
	pgpsk_conn *c = SSL_get_app_data(ssl);

	if (c == NULL || c->handle == 0 || identity == NULL)
		return 0;
	return pgpskServerKey(c->handle, (char *)identity, psk, max_psk_len);
}

SSL_CTX *pgpsk_ctx_new(int server, unsigned long *err)
{
	SSL_CTX *ctx;

	ERR_clear_error();
	ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
	if (ctx == NULL)
		goto fail;
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
	    SSL_CTX_set_cipher_list(ctx, PGPSK_CIPHERS) != 1 ||
	    SSL_CTX_set_ciphersuites(ctx, PGPSK_CIPHERS13) != 1)
		goto fail;
	// No session resumption (Zabbix has none either), no compression,
	// no renegotiation; the server's order of suites wins, as Zabbix's.
	SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET | SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION |
				 (server ? SSL_OP_CIPHER_SERVER_PREFERENCE : 0));
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	// Idle connections give their read and write buffers back.
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	if (server) {
		if (SSL_CTX_set_num_tickets(ctx, 0) != 1)
			goto fail;
		SSL_CTX_set_psk_server_callback(ctx, server_cb);
	} else {
		SSL_CTX_set_psk_client_callback(ctx, client_cb);
	}
	return ctx;
fail:
	*err = ERR_get_error();
	ERR_clear_error();
	SSL_CTX_free(ctx);
	return NULL;
}

pgpsk_conn *pgpsk_new(SSL_CTX *ctx, int server, const char *identity, size_t identity_len,
		      const unsigned char *key, size_t key_len, unsigned long *err)
{
	pgpsk_conn *c;
	BIO *in = NULL, *out = NULL;

	*err = 0;
	if (!server && (identity_len == 0 || identity_len > PGPSK_MAX_IDENTITY || key_len == 0 || key_len > PGPSK_MAX_KEY ||
			memchr(identity, 0, identity_len) != NULL))
		return NULL;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	if (!server) {
		memcpy(c->identity, identity, identity_len);
		memcpy(c->key, key, key_len);
		c->key_len = (unsigned int)key_len;
	}
	ERR_clear_error();
	c->ssl = SSL_new(ctx);
	in = BIO_new(BIO_s_mem());
	out = BIO_new(BIO_s_mem());
	if (c->ssl == NULL || in == NULL || out == NULL) {
		*err = ERR_get_error();
		ERR_clear_error();
		BIO_free(in);
		BIO_free(out);
		SSL_free(c->ssl);
		OPENSSL_cleanse(c, sizeof(*c));
		free(c);
		return NULL;
	}
	// An empty BIO means "wait for more", not end of file.
	BIO_set_mem_eof_return(in, -1);
	BIO_set_mem_eof_return(out, -1);
	SSL_set_bio(c->ssl, in, out); // the SSL owns both from here
	SSL_set_app_data(c->ssl, c);
	if (server)
		SSL_set_accept_state(c->ssl);
	else
		SSL_set_connect_state(c->ssl);
	return c;
}

void pgpsk_free(pgpsk_conn *c)
{
	if (c == NULL)
		return;
	SSL_free(c->ssl);
	OPENSSL_cleanse(c, sizeof(*c));
	free(c);
}

void pgpsk_set_handle(pgpsk_conn *c, uintptr_t h) { c->handle = h; }

int pgpsk_feed(pgpsk_conn *c, const void *buf, int n) { return BIO_write(SSL_get_rbio(c->ssl), buf, n); }

int pgpsk_drain(pgpsk_conn *c, void *buf, int n) { return BIO_read(SSL_get_wbio(c->ssl), buf, n); }

size_t pgpsk_pending(pgpsk_conn *c) { return BIO_ctrl_pending(SSL_get_wbio(c->ssl)); }

static void finish(pgpsk_conn *c, int ret, pgpsk_res *r)
{
	r->ret = ret;
	r->ssl_error = ret > 0 ? SSL_ERROR_NONE : SSL_get_error(c->ssl, ret);
	r->err = ERR_get_error();
	ERR_clear_error();
}

void pgpsk_handshake(pgpsk_conn *c, pgpsk_res *r)
{
	ERR_clear_error();
	finish(c, SSL_do_handshake(c->ssl), r);
}

void pgpsk_read(pgpsk_conn *c, void *buf, int n, pgpsk_res *r)
{
	ERR_clear_error();
	finish(c, SSL_read(c->ssl, buf, n), r);
}

void pgpsk_write(pgpsk_conn *c, const void *buf, int n, pgpsk_res *r)
{
	ERR_clear_error();
	finish(c, SSL_write(c->ssl, buf, n), r);
}

void pgpsk_shutdown(pgpsk_conn *c)
{
	ERR_clear_error();
	(void)SSL_shutdown(c->ssl);
	ERR_clear_error();
}

const char *pgpsk_version(pgpsk_conn *c) { return SSL_get_version(c->ssl); }

const char *pgpsk_cipher(pgpsk_conn *c)
{
	const SSL_CIPHER *cs = SSL_get_current_cipher(c->ssl);
	const char *name;

	if (cs == NULL)
		return "";
	name = SSL_CIPHER_standard_name(cs);
	return name != NULL ? name : SSL_CIPHER_get_name(cs);
}

int pgpsk_reason(unsigned long e) { return ERR_GET_REASON(e); }

void pgpsk_error_string(unsigned long e, char *buf, size_t n) { ERR_error_string_n(e, buf, n); }

int pgpsk_restrict(pgpsk_conn *c, const char *ciphers, const char *ciphers13, int max_version)
{
	int ok = 1;

	ERR_clear_error();
	if (ciphers != NULL && ciphers[0] != '\0')
		ok &= SSL_set_cipher_list(c->ssl, ciphers);
	if (ciphers13 != NULL && ciphers13[0] != '\0')
		ok &= SSL_set_ciphersuites(c->ssl, ciphers13);
	if (max_version != 0)
		ok &= SSL_set_max_proto_version(c->ssl, max_version);
	ERR_clear_error();
	return ok;
}

/* tls.h - the TLS policy's per-connection half (tls.c), for http.c; the priority string and the
 * cipher-suite names are public (clusterfit/exporter.h). */
#ifndef CFIT_EXPORTER_TLS_H
#define CFIT_EXPORTER_TLS_H

#include "clusterfit/exporter.h"

/* Apply the web config's client-certificate and cipher-suite rules to a new connection's GnuTLS
 * session (a gnutls_session_t, before its handshake); wc must outlive the session. */
void cfit__tls_session_setup(void *session, const cfit_web_config *wc);

#endif

/**
 * Throw-away TLS material for tests against a TLS redis-server, made with
 * the openssl command line into a temporary directory at test time (nothing
 * is committed): a CA, a server certificate for 127.0.0.1 and localhost
 * signed by it, a client certificate for mutual TLS, and a second CA that
 * signed neither (to show a wrong trust anchor is refused).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** PEM files in one temporary directory; {@link TlsCerts.remove} deletes it. */
export interface TlsCerts {
  readonly dir: string;
  /** The CA that signed the server and client certificates. */
  readonly caFile: string;
  /** Server certificate (SAN: IP 127.0.0.1, DNS localhost) and its key. */
  readonly serverCertFile: string;
  readonly serverKeyFile: string;
  /** Client certificate for mutual TLS and its key. */
  readonly clientCertFile: string;
  readonly clientKeyFile: string;
  /** A CA that signed nothing here. */
  readonly otherCaFile: string;
  remove(): void;
}

/** Makes the certificates (EC P-256 keys: quick to generate). Valid for one day. */
export async function makeTlsCerts(): Promise<TlsCerts> {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-tls-'));
  const file = (name: string) => join(dir, name);
  const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await run('openssl', ['req', '-x509', ...key, '-keyout', file('ca.key'), '-out', file('ca.crt'), '-days', '1', '-subj', '/CN=switchyard test CA']);
  await run('openssl', ['req', '-x509', ...key, '-keyout', file('other-ca.key'), '-out', file('other-ca.crt'), '-days', '1', '-subj', '/CN=switchyard other CA']);
  const sign = async (name: string, subject: string, extensions: string) => {
    writeFileSync(file(`${name}.ext`), extensions + '\n');
    await run('openssl', ['req', ...key, '-keyout', file(`${name}.key`), '-out', file(`${name}.csr`), '-subj', subject]);
    await run('openssl', ['x509', '-req', '-in', file(`${name}.csr`), '-CA', file('ca.crt'), '-CAkey', file('ca.key'), '-CAcreateserial', '-out', file(`${name}.crt`), '-days', '1', '-extfile', file(`${name}.ext`)]);
  };
  await sign('server', '/CN=localhost', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth');
  await sign('client', '/CN=switchyard', 'extendedKeyUsage=clientAuth');
  return {
    dir,
    caFile: file('ca.crt'),
    serverCertFile: file('server.crt'),
    serverKeyFile: file('server.key'),
    clientCertFile: file('client.crt'),
    clientKeyFile: file('client.key'),
    otherCaFile: file('other-ca.crt'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * redis.conf lines for a TLS listener on `tlsPort` beside the plain one.
 * `requireClientCert`: mutual TLS (`tls-auth-clients yes`).
 */
export function redisTlsConfig(certs: TlsCerts, tlsPort: number, requireClientCert: boolean): string[] {
  return [
    `tls-port ${tlsPort}`,
    `tls-cert-file ${certs.serverCertFile}`,
    `tls-key-file ${certs.serverKeyFile}`,
    `tls-ca-cert-file ${certs.caFile}`,
    `tls-auth-clients ${requireClientCert ? 'yes' : 'no'}`,
  ];
}

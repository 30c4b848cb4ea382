/**
 * A TCP relay: `node tcp-relay.ts LISTEN_HOST:PORT TARGET_HOST:PORT`. The
 * in-cluster validation runs one inside the router's network namespace, so
 * the router reaches the kube-apiserver (which listens on the host's
 * loopback) at 127.0.0.1, an address its serving certificate names. Prints
 * `listening` once bound; runs until killed.
 */
import { connect, createServer } from 'node:net';

/** Relays every connection to `listen` on to `target`; resolves once bound. */
export function relay(listen: { host: string; port: number }, target: { host: string; port: number }): Promise<() => Promise<void>> {
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host, () =>
      resolve(
        () =>
          new Promise<void>((done) => {
            server.close(() => done());
          }),
      ),
    );
  });
}

function hostPort(text: string | undefined): { host: string; port: number } {
  const colon = text?.lastIndexOf(':') ?? -1;
  if (text === undefined || colon < 1) throw new Error('usage: tcp-relay.ts LISTEN_HOST:PORT TARGET_HOST:PORT');
  return { host: text.slice(0, colon), port: Number(text.slice(colon + 1)) };
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  await relay(hostPort(process.argv[2]), hostPort(process.argv[3]));
  process.stdout.write('listening\n');
}

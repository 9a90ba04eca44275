import { connect, createServer, type Socket } from 'node:net';

/**
 * A TCP relay on the loopback to `target` (host and port) that can be cut: every connection
 * through it is destroyed at once and no new one is taken, as when the far end goes away.
 * Half-closed connections stay open in the other direction (Docker's exec streams need it).
 */
export async function cuttableRelay(target: { host: string; port: number }): Promise<{ url: string; cut(): void }> {
  const sockets = new Set<Socket>();
  const relay = createServer({ allowHalfOpen: true }, (client) => {
    const far = connect({ ...target, allowHalfOpen: true });
    for (const sock of [client, far]) {
      sockets.add(sock);
      sock.on('error', () => {});
    }
    client.pipe(far);
    far.pipe(client);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const { port } = relay.address() as { port: number };
  return {
    url: `tcp://127.0.0.1:${port}`,
    cut: () => {
      relay.close();
      for (const sock of sockets) sock.destroy();
    },
  };
}

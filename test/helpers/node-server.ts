// A server of startline/node (src/node/) on a free loopback port, for the
// tests of node's interface on the engine: started, its port known, and
// closed when the test ends, its connections cut.

import { once } from "node:events";
import type { AddressInfo } from "node:net";
import type { Server } from "../../src/node/server.js";

export interface RunningNode {
  readonly port: number;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1 and a free port; close() cuts what is still open, then waits for the server to close. */
export async function listenNode(server: Server): Promise<RunningNode> {
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

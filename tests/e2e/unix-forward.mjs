// A test-only TCP-to-Unix-socket forwarder: listens on 127.0.0.1 (an
// ephemeral port, printed on stdout as "PORT\n") and copies the bytes of
// every connection to and from the Unix socket named on the command line.
// It speaks no HTTP: cordond's mcp-http.sock answers, and the subject is
// this process's uid. Used by tests that drive cordond's Streamable HTTP
// endpoint with clients that only dial TCP (the conformance CLI, the SDK),
// always inside the test's own network namespace.
//   node unix-forward.mjs SOCKET
import net from 'node:net';

const path = process.argv[2];
const server = net.createServer((c) => {
  const u = net.createConnection(path);
  c.pipe(u);
  u.pipe(c);
  const end = () => { c.destroy(); u.destroy(); };
  c.on('error', end);
  u.on('error', end);
  c.on('close', end);
  u.on('close', end);
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));

// A transparent local proxy that adds `Authorization: Bearer $ECHO_MEM_API_KEY` to every
// request: the conformance suite cannot send headers of its own. Everything else (Host,
// Origin, the body, the status) passes through unchanged, so the server's own checks see
// exactly what the suite sent. Usage: node auth-proxy.mjs <listen-port> <upstream-origin>
import http from "node:http";

const [port, upstream] = process.argv.slice(2);
const target = new URL(upstream);

const server = http.createServer((req, res) => {
  const headers = { ...req.headers, authorization: `Bearer ${process.env.ECHO_MEM_API_KEY}` };
  const forward = http.request(
    { host: target.hostname, port: target.port, method: req.method, path: req.url, headers },
    (answer) => {
      res.writeHead(answer.statusCode, answer.headers);
      answer.pipe(res);
    },
  );
  forward.on("error", (e) => {
    res.writeHead(502, { "content-type": "text/plain" });
    res.end(`proxy: ${e.message}`);
  });
  req.pipe(forward);
});
server.listen(Number(port), "127.0.0.1", () => console.log(`auth proxy on ${port}`));

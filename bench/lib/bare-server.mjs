// The baseline of `npm run bench:http`: a bare Fastify in its own process answering, on each path given, the exact
// bytes Herald answered there (argv[2]: JSON {port, bodies: {path: base64 body}}). Prints "listening" when ready.
import Fastify from 'fastify';

const { port, bodies } = JSON.parse(process.argv[2]);
const app = Fastify({ logger: false });
for (const [path, base64] of Object.entries(bodies)) {
  const body = Buffer.from(base64, 'base64');
  app.get(path, (_request, reply) => reply.header('content-type', 'application/json; charset=utf-8').send(body));
}
await app.listen({ host: '127.0.0.1', port });
process.stdout.write('listening\n');

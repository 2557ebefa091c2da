// The baseline of `npm run bench:http`: a bare Fastify in its own process answering, on each URL given, the exact
// bytes Herald answered there (argv[2]: JSON {port, bodiesFile}; the file: {url with its query: base64 body}). An URL
// not given is a 404, which the bench reports in bareStatusCounts. Prints "listening" when ready.
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

const { port, bodiesFile } = JSON.parse(process.argv[2]);
const bodies = new Map(Object.entries(JSON.parse(readFileSync(bodiesFile, 'utf8'))).map(([url, base64]) => [url, Buffer.from(base64, 'base64')]));
const app = Fastify({ logger: false });
for (const path of new Set([...bodies.keys()].map((url) => url.split('?')[0]))) {
  app.get(path, (request, reply) => {
    const body = bodies.get(request.url);
    if (!body) return reply.code(404).send();
    return reply.header('content-type', 'application/json; charset=utf-8').send(body);
  });
}
await app.listen({ host: '127.0.0.1', port });
process.stdout.write('listening\n');

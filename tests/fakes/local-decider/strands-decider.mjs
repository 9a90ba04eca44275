#!/usr/bin/env node
// A stand-in `strands-decider serve CHECKPOINT --host H --port P --model-name NAME`: decider
// protocol v1 on /v1/systemone (every noul answered 0.2), /health naming the model, one
// request at a time (a second concurrent request is counted in $STANDIN_OVERLAPS).
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';

const args = process.argv.slice(2);
const opt = (name) => args[args.indexOf(name) + 1];
if (args[0] !== 'serve') {
  console.log('usage: strands-decider serve CHECKPOINT [--device cpu|cuda|mps]');
  process.exit(args[0] === '--help' ? 0 : 2);
}
const model = opt('--model-name') ?? 'strands-decider';
let busy = 0;
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const send = (status, body) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'GET' && req.url === '/health') return send(200, { status: 'ok', model, max_length: 4096 });
    if (req.method !== 'POST' || req.url !== '/v1/systemone') return send(404, { detail: 'Not Found' });
    busy++;
    if (busy > 1 && process.env.STANDIN_OVERLAPS) appendFileSync(process.env.STANDIN_OVERLAPS, 'overlap\n');
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      busy--;
      return send(422, { detail: 'not JSON' });
    }
    setTimeout(
      () => {
        busy--;
        const answers = {};
        for (const id of Object.keys(body.questions ?? {})) answers[id] = { type: 'noul', noul: 0.2 };
        send(200, { model, answers, usage: { input_tokens: 100 } });
      },
      Number(process.env.STANDIN_ANSWER_MS ?? 5),
    );
  });
});
server.listen(Number(opt('--port')), opt('--host') ?? '127.0.0.1', () => {
  console.error(`stand-in strands-decider: ${model} on ${opt('--host')}:${opt('--port')}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));

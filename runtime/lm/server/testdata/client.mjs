// The official openai client against graphc's server with the tests'
// fake engine, which generates the prompt back: node client.mjs BASE_URL
// MODEL, BASE_URL ending in /v1. It checks the shapes and texts of
// completions and chat completions, streamed and not, several at once,
// and exits non-zero on the first failure. TestOpenAIClient runs it.
import OpenAI, { APIUserAbortError, BadRequestError } from 'openai';
import assert from 'node:assert/strict';

const [baseURL, model] = process.argv.slice(2);
if (!baseURL || !model) {
  console.error('usage: node client.mjs BASE_URL MODEL');
  process.exit(2);
}
// No retries: a failed request must fail the check, not be tried again.
const client = new OpenAI({ baseURL, apiKey: 'none', maxRetries: 0, timeout: 60_000 });

// chat is the prompt the tests' template renders and the engine gives back.
const chat = (msgs) => msgs.map((m) => `${m.role}: ${m.content}\n`).join('') + 'assistant:';

async function models() {
  const list = await client.models.list();
  assert.equal(list.data.length, 1);
  assert.equal(list.data[0].id, model);
  assert.equal(list.data[0].object, 'model');
  assert.equal(list.data[0].owned_by, 'graphc');
}

async function completion(prompt) {
  const c = await client.completions.create({ model, prompt, temperature: 0 });
  assert.match(c.id, /^cmpl-/);
  assert.equal(c.object, 'text_completion');
  assert.equal(c.model, model);
  assert.equal(c.choices.length, 1);
  assert.equal(c.choices[0].text, prompt);
  assert.equal(c.choices[0].finish_reason, 'stop');
  const n = [...prompt].length;
  assert.deepEqual(c.usage, { prompt_tokens: n + 1, completion_tokens: n, total_tokens: 2 * n + 1 });
}

async function completionLength() {
  const c = await client.completions.create({ model, prompt: 'Hello, world', max_tokens: 5, stop: ['\n'] });
  assert.equal(c.choices[0].text, 'Hello');
  assert.equal(c.choices[0].finish_reason, 'length');
}

async function completionStream(prompt) {
  const stream = await client.completions.create({
    model, prompt, stream: true, stream_options: { include_usage: true }, top_k: 1, seed: 7,
  });
  let text = '';
  let finish = null;
  let usage = null;
  for await (const chunk of stream) {
    assert.equal(chunk.object, 'text_completion');
    if (chunk.usage) {
      assert.equal(chunk.choices.length, 0);
      usage = chunk.usage;
      continue;
    }
    assert.equal(finish, null, 'a chunk after the one with finish_reason');
    text += chunk.choices[0].text;
    finish = chunk.choices[0].finish_reason;
  }
  assert.equal(text, prompt);
  assert.equal(finish, 'stop');
  assert.equal(usage?.completion_tokens, [...prompt].length);
}

async function chatCompletion(messages) {
  const c = await client.chat.completions.create({ model, messages, max_completion_tokens: 1000 });
  assert.match(c.id, /^chatcmpl-/);
  assert.equal(c.object, 'chat.completion');
  assert.equal(c.choices.length, 1);
  assert.equal(c.choices[0].message.role, 'assistant');
  assert.equal(c.choices[0].message.content, chat(messages));
  assert.equal(c.choices[0].finish_reason, 'stop');
  assert.equal(c.usage.completion_tokens, [...chat(messages)].length);
}

async function chatStream(messages, want, finishWant, extra = {}) {
  const stream = await client.chat.completions.create({ model, messages, stream: true, ...extra });
  const chunks = [];
  for await (const chunk of stream) {
    assert.equal(chunk.object, 'chat.completion.chunk');
    assert.match(chunk.id, /^chatcmpl-/);
    chunks.push(chunk);
  }
  assert.equal(chunks[0].choices[0].delta.role, 'assistant');
  const last = chunks.at(-1).choices[0];
  assert.equal(last.finish_reason, finishWant);
  assert.equal(chunks.slice(0, -1).filter((c) => c.choices[0].finish_reason !== null).length, 0);
  assert.equal(chunks.map((c) => c.choices[0].delta.content ?? '').join(''), want);
}

async function badRequest(body, type) {
  await assert.rejects(client.completions.create({ model, ...body }), (err) => {
    assert.ok(err instanceof BadRequestError, `${err}`);
    assert.equal(err.status, 400);
    assert.equal(err.type, type);
    return true;
  });
}

// aborted leaves a stream after its first chunk; the server's test
// checks that the engine saw the sequence canceled.
async function aborted() {
  const ctrl = new AbortController();
  const stream = await client.completions.create(
    { model, prompt: 'x'.repeat(2000), stream: true }, { signal: ctrl.signal });
  let chunks = 0;
  try {
    for await (const chunk of stream) {
      assert.equal(chunk.choices[0].text, 'x');
      chunks++;
      ctrl.abort();
    }
  } catch (err) {
    if (!(err instanceof APIUserAbortError)) throw err;
  }
  assert.ok(chunks < 100, `${chunks} chunks after the abort`);
}

const user = (content) => [{ role: 'user', content }];
const checks = [
  ['models', models],
  ['completion', () => completion('Hello, world')],
  ['completion of unicode', () => completion('héllo, 世界 🌍')],
  ['completion max_tokens', completionLength],
  ['completion stream', () => completionStream('Hello, stream')],
  ['chat', () => chatCompletion([{ role: 'system', content: 'Be brief.' }, ...user('Hi')])],
  ['chat stream', () => chatStream(user('Hi'), chat(user('Hi')), 'stop')],
  ['chat stream stop', () => chatStream(user('Hi'), 'user: ', 'stop', { stop: 'Hi' })],
  ['chat stream max_tokens', () => chatStream(user('Hi'), 'use', 'length', { max_tokens: 3 })],
  ['chat content parts', () => chatStream(
    [{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }],
    'user: a\nb\nassistant:', 'stop')],
  ['n > 1', () => badRequest({ prompt: 'a', n: 2 }, 'invalid_request_error')],
  ['prompt over the context', () => badRequest({ prompt: 'x'.repeat(5000) }, 'exceed_context_size_error')],
  ['abort mid-stream', aborted],
  ['several at once', () => Promise.all(Array.from({ length: 16 }, (_, i) => [
    () => completion(`request ${i}`),
    () => completionStream(`request ${i}`),
    () => chatCompletion(user(`request ${i}`)),
    () => chatStream(user(`request ${i}`), chat(user(`request ${i}`)), 'stop'),
  ][i % 4]()))],
  ['after the others', () => completion('still serving')],
];

for (const [name, check] of checks) {
  try {
    await check();
    console.log(`ok   ${name}`);
  } catch (err) {
    console.log(`FAIL ${name}: ${err.stack ?? err}`);
    process.exit(1);
  }
}

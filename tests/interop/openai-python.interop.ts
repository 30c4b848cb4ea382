/**
 * The official openai Python SDK (sync and async clients) against a router
 * in front of engine simulators: every route the SDK types, tool calls, error
 * mapping, its default retries against the router's 429, and a client that
 * gives up (timeout, closed stream) letting go of the engine too. The script
 * (python/openai_sdk_check.py) runs once and reports facts; the assertions
 * live here.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { EngineSimulator } from '../../loadtest/sim/server.ts';
import { startInProcessRouter, waitFor, type StartedRouter } from '../kit/harness.ts';
import { recordRow } from './compat-rows.ts';
import { lastJsonLine, pythonFile, runPython, venvPython } from './python-client.ts';

const FILE = 'tests/interop/openai-python.interop.ts';
const MODEL = 'm-py';
/** Tool calls the engines put in one answer when asked (the simulator's toolCalls knob, per request). */
const TOOL_CALLS = 3;
/** The tools the script offers; the simulator names its calls after them in turn. */
const OFFERED = ['search', 'get_weather'];
const ID_PREFIX = 'py-sdk';
const SUBJECT = 'openai (PyPI)';

type Facts = Record<string, unknown> & { error?: string; trace?: string };
interface ScriptResult {
  readonly python: string;
  readonly openai: string;
  readonly checks: Record<string, Facts>;
}
interface ToolFacts {
  count: number;
  names: string[];
  ids: (string | null)[];
  arguments: unknown[];
  finish_reason: string | null;
}
interface ErrorFacts {
  exception: string | null;
  status?: number;
  code?: string | null;
  type?: string | null;
}

describe('openai Python SDK through switchyard', { timeout: 300_000 }, () => {
  const engines = [new EngineSimulator({ model: MODEL }), new EngineSimulator({ model: MODEL, seed: 2 })];
  // The shedding router's one engine runs one sequence, and the router knows it (load.capacity).
  const shedEngine = new EngineSimulator({ model: MODEL, knobs: { maxSeqs: 1, ttftMs: 0, itlMs: 0 } });
  const configDir = mkdtempSync(join(tmpdir(), 'switchyard-py-'));
  let router: StartedRouter | undefined;
  let shedRouter: StartedRouter | undefined;
  let result: ScriptResult;

  /** One check's facts; a check the script could not run fails here with its Python error. */
  const check = <T = Facts>(name: string): T => {
    const facts = result.checks[name];
    assert.ok(facts !== undefined, `no check ${name}`);
    assert.equal(facts.error, undefined, `${name}: ${facts.error ?? ''}\n${facts.trace ?? ''}`);
    return facts as T;
  };
  const row = (exercised: string, test: string, outcome = 'pass') =>
    recordRow({ area: 'client', subject: SUBJECT, version: result.openai, exercised, result: outcome, test: `${FILE}: ${test}` });

  before(async () => {
    const python = await venvPython('clients-requirements.txt');
    for (const engine of [...engines, shedEngine]) await engine.listen();
    router = await startInProcessRouter(engines.flatMap((e) => ['--backend', e.url]), engines.length);
    const config = join(configDir, 'shed.json');
    writeFileSync(config, JSON.stringify({ load: { capacity: { [shedEngine.url]: 1 } }, admission: { maxWaiting: 0, queueLength: 0 } }));
    shedRouter = await startInProcessRouter(['--backend', shedEngine.url, '--config', config], 1);
    const run = await runPython(
      python,
      [pythonFile('openai_sdk_check.py'), '--base', `${router.base}/v1`, '--model', MODEL, '--tool-calls', String(TOOL_CALLS), '--shed-base', `${shedRouter.base}/v1`, '--shed-engine', shedEngine.url, '--id-prefix', ID_PREFIX],
      { timeoutMs: 120_000 },
    );
    result = lastJsonLine<ScriptResult>(run);
  });

  after(async () => {
    await router?.router.close();
    await shedRouter?.router.close();
    await Promise.all([...engines, shedEngine].map((e) => e.close()));
    rmSync(configDir, { recursive: true, force: true });
  });

  it('chat, completions, embeddings, models and the Responses API, streamed and not, sync and async', () => {
    const chat = check<{ object: string; text: string; finish_reason: string }>('chat');
    assert.equal(chat.object, 'chat.completion');
    assert.ok(chat.text.length > 0);
    assert.equal(chat.finish_reason, 'stop');
    for (const name of ['chat_stream', 'async_chat_stream']) {
      const streamed = check<{ text: string; finish_reason: string }>(name);
      assert.equal(streamed.text, chat.text, `${name}: the same text as the whole answer`);
      assert.equal(streamed.finish_reason, 'stop');
    }
    assert.equal(check<{ text: string }>('async_chat').text, chat.text);
    const completions = check<{ object: string; text: string; streamed_text: string }>('completions');
    assert.equal(completions.object, 'text_completion');
    assert.ok(completions.text.length > 0);
    assert.equal(completions.streamed_text, completions.text);
    assert.equal(check<{ streamed_text: string }>('async_completions_stream').streamed_text, completions.text);
    for (const name of ['embeddings', 'async_embeddings']) {
      const embeddings = check<{ count: number; dimensions: number }>(name);
      assert.deepEqual([embeddings.count, embeddings.dimensions], [1, 4], name);
    }
    for (const name of ['models', 'async_models']) assert.deepEqual(check<{ ids: string[] }>(name).ids, [MODEL]);
    const response = check<{ object: string; status: string; text: string; id_prefix: string }>('responses');
    assert.deepEqual([response.object, response.status, response.id_prefix], ['response', 'completed', 'resp_']);
    assert.ok(response.text.length > 0);
    assert.equal(check<{ text: string }>('async_responses').text, response.text);
    for (const name of ['responses_stream', 'async_responses_stream']) {
      const events = check<{ first: string; last: string; delta_text: string; final_text: string }>(name);
      assert.equal(events.first, 'response.created');
      assert.equal(events.last, 'response.completed');
      assert.equal(events.delta_text, response.text, `${name}: deltas add up to the text`);
      assert.equal(events.final_text, response.text);
    }
    row('chat, completions, embeddings, models.list, Responses API; streamed and not; sync and async clients', 'routes');
  });

  it('tool calls: several per response, accumulated per index when streamed, every argument string valid JSON', () => {
    const names = Array.from({ length: TOOL_CALLS }, (_, i) => OFFERED[i % OFFERED.length]);
    for (const name of ['tools', 'tools_stream', 'tools_stream_helper', 'async_tools', 'async_tools_stream']) {
      const facts = check<ToolFacts>(name);
      assert.deepEqual([facts.count, facts.names, facts.finish_reason], [TOOL_CALLS, names, 'tool_calls'], name);
      assert.equal(new Set(facts.ids).size, TOOL_CALLS, `${name}: one id per call`);
      // Each call's arguments are their own object (the simulator seeds each call apart): nothing interleaved.
      const args = facts.arguments as { location?: string; request?: number }[];
      assert.ok(args.every((a) => a.location === 'Zürich, CH'), `${name}: ${JSON.stringify(args).slice(0, 300)}`);
      assert.equal(new Set(args.map((a) => a.request)).size, TOOL_CALLS, `${name}: distinct arguments per call`);
    }
    const one = check<{ plain: ToolFacts; streamed: ToolFacts }>('one_tool');
    for (const facts of [one.plain, one.streamed]) {
      assert.deepEqual([facts.count, facts.names], [1, ['search']]);
      assert.equal((facts.arguments[0] as { location?: string }).location, 'Zürich, CH');
    }
    row(`tool calls: ${TOOL_CALLS} per response streamed (deltas interleaved by index; joined by hand and by the SDK's stream helper) and not, 1.5 KB arguments each; json.loads on each`, 'tools');
  });

  it('maps router errors to the SDK exceptions: NotFoundError for an unknown model, BadRequestError for a body without model', () => {
    for (const name of ['not_found', 'async_not_found']) {
      const facts = check<ErrorFacts>(name);
      assert.equal(facts.exception, 'NotFoundError', name);
      assert.deepEqual([facts.status, facts.code, facts.type], [404, 'SWITCHYARD_MODEL_NOT_FOUND', 'not_found_error'], name);
    }
    const bad = check<ErrorFacts>('bad_request');
    assert.equal(bad.exception, 'BadRequestError');
    assert.deepEqual([bad.status, bad.code, bad.type], [400, 'SWITCHYARD_MISSING_MODEL', 'invalid_request_error'], 'the OpenAI error body reaches the SDK');
    row('errors: unknown model raises NotFoundError (404), body without model raises BadRequestError (400)', 'errors');
  });

  it('retries a shed request with its default max_retries after the advertised Retry-After (±20%) and succeeds', (t) => {
    const facts = check<{ text?: string; max_retries: number; attempts: { status: number; retry_after: string | null; retry_after_ms: string | null; retry_count: string | null }[]; gaps_s: number[] }>('retry');
    assert.equal(facts.max_retries, 2);
    const [shed, retried] = facts.attempts;
    assert.ok(shed !== undefined && retried !== undefined, JSON.stringify(facts));
    assert.equal(shed.status, 429, JSON.stringify(facts));
    assert.equal(retried.status, 200, JSON.stringify(facts));
    assert.equal(facts.attempts.length, 2);
    assert.ok(typeof facts.text === 'string' && facts.text.length > 0);
    const advertised = shed.retry_after_ms !== null ? Number(shed.retry_after_ms) / 1000 : Number(shed.retry_after);
    assert.ok(advertised >= 1, `Retry-After ${String(shed.retry_after)}`);
    const gap = facts.gaps_s[0] as number;
    assert.ok(Math.abs(gap - advertised) <= 0.2 * advertised, `retried after ${gap.toFixed(3)} s, advertised ${advertised} s`);
    t.diagnostic(`openai-python retry: 429 Retry-After ${String(shed.retry_after)} (retry-after-ms ${String(shed.retry_after_ms)}), retried after ${gap.toFixed(3)} s, then ${retried.status}`);
    row('default retries (max_retries=2) on 429: waits the Retry-After the router sends (±20%), then succeeds', 'retry');
  });

  it("lets go of the engine when the client gives up: a timeout and a closed stream, sync and async", async () => {
    for (const name of ['timeout', 'async_timeout']) assert.equal(check<{ exception: string | null }>(name).exception, 'APITimeoutError', name);
    for (const name of ['cancel', 'async_cancel']) assert.equal(check<{ chunks: number }>(name).chunks, 5, name);
    for (const name of ['timeout', 'async_timeout', 'cancel', 'async_cancel']) {
      const id = check<{ request_id: string }>(name).request_id;
      // The engine records a response once it is over; a cut one is recorded incomplete.
      await waitFor(() => engines.some((e) => e.sent(id) !== undefined), 10_000).catch(() => assert.fail(`${name}: the engine never saw ${id} end`));
      const sent = engines.map((e) => e.sent(id)).find((s) => s !== undefined);
      assert.equal(sent?.complete, false, `${name}: the engine's response was cut`);
    }
    row('client timeout (APITimeoutError) and closed stream cut the engine response, sync and async', 'cancel');
  });
});

/**
 * An engine that costs next to nothing: nginx answering every chat
 * completion with the same small non-streamed answer (its `id` ends with the
 * request's `X-Request-Id`, as the simulator's does, so the load generator's
 * checks hold), a model list, `/health` and an idle engine's `/metrics`.
 *
 * Why: on this machine the engine and the load generator share one core. The
 * engine simulator is a Node process that spends about as much CPU on a
 * request as the router does, so at half the router's maximum rate that core
 * ran 72-96% busy, and the engine's own p99 read 10-46 ms from run to run
 * with no proxy in front of it: the tail a proxy adds was lost in the tail of
 * the machine. Answered by nginx, the same rate kept that core 25-37% busy
 * and the engine's p99 at 1.6-2.7 ms (five runs, 2026-12-02), so what a
 * proxy adds is what shows.
 * It answers nothing but a small chat completion: scenarios that need
 * streaming, token timing or load signals use the simulator. The request's
 * id goes into the answer as sent, so it must be one JSON takes unescaped
 * (the load generator's are).
 */
import { nginxFrame, runNginx, type Nginx } from './nginx.ts';

/** The answer's text, as the simulator writes 16 tokens of it. */
const CONTENT = 'hello héllo wörld 日本語 token 🚀 switch yard ñandú data hello héllo wörld 日本語 token 🚀 ';

/** The placeholder the request's id replaces in the answer. */
const REQUEST_ID = '$http_x_request_id';

/** The body of every chat completion, with `REQUEST_ID` where the request's id goes. */
export function staticChatAnswer(model: string): string {
  return JSON.stringify({
    id: `chatcmpl-${REQUEST_ID}`,
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: CONTENT }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 8, completion_tokens: 16, total_tokens: 24 },
  });
}

/** An nginx string literal for `text`; a `$` other than the request id's would be read as a variable. */
function literal(text: string): string {
  if (text.replace(REQUEST_ID, '').includes('$')) throw new Error('a static answer may not contain $');
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** The configuration file text. */
export function staticEngineConfig(options: { readonly dir: string; readonly port: number; readonly model: string; readonly maxConnections: number }): string {
  const models = JSON.stringify({ object: 'list', data: [{ id: options.model, object: 'model', created: 0, owned_by: 'vllm', root: options.model, parent: null, max_model_len: 8192 }] });
  const gauges = ['num_requests_running', 'num_requests_waiting', 'kv_cache_usage_perc'].map((name) => `vllm:${name}{engine="0",model_name="${options.model}"} 0.0\n`).join('');
  // `return` discards the request body, so nothing needs buffering.
  return nginxFrame(
    { dir: options.dir, workerConnections: options.maxConnections + 32 },
    `  server {
    listen 127.0.0.1:${options.port} backlog=4096;
    keepalive_requests 1000000;
    client_max_body_size 16m;
    location = /v1/chat/completions {
      default_type application/json;
      return 200 ${literal(staticChatAnswer(options.model))};
    }
    location = /v1/models {
      default_type application/json;
      return 200 ${literal(models)};
    }
    # vLLM's health check, which the vLLM project's router waits on before it routes.
    location = /health {
      return 200;
    }
    location = /metrics {
      default_type text/plain;
      return 200 ${literal(gauges)};
    }
    location / {
      return 404;
    }
  }
`,
  );
}

/** Starts the static engine serving `model`, pinned to `core` when given. */
export function startStaticEngine(options: { readonly model: string; readonly core?: number; readonly maxConnections?: number }): Promise<Nginx> {
  const maxConnections = options.maxConnections ?? 12_000;
  return runNginx((dir, port) => staticEngineConfig({ dir, port, model: options.model, maxConnections }), 'static answers (the static engine)', options.core);
}

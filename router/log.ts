import { pino, type Logger } from 'pino';

/** The process logger. Never pass it request bodies, prompts or credentials. */
export type { Logger };

/** Creates the structured JSON logger; authorization-like fields are redacted as a safety net. */
export function createLogger(level: string, destination: NodeJS.WritableStream = process.stderr): Logger {
  return pino(
    {
      level,
      base: { service: 'switchyard' },
      redact: { paths: ['authorization', '*.authorization', 'apiKey', '*.apiKey', 'headers.authorization'], censor: '[redacted]' },
    },
    untilBroken(destination),
  );
}

/**
 * Writes to `stream` until a write to it fails, then drops every line. When
 * the reader of the router's standard error goes away (a pipe into a process
 * that exited, a log collector gone), each write fails with EPIPE; nobody
 * heard that error, so it reached the process net (cli/process-net.ts),
 * whose log line failed the same way: the router spun at 100% CPU logging
 * its own failure to log. Losing the log must not cost the traffic.
 */
export function untilBroken(stream: NodeJS.WritableStream): { write(line: string): void } {
  let broken = false;
  stream.on('error', () => {
    broken = true;
  });
  return {
    write(line) {
      if (!broken) stream.write(line);
    },
  };
}

/** Longest error message logged (characters): a message may quote a reply or a command's arguments. */
const MAX_MESSAGE_LENGTH = 200;

/**
 * What a log line may say about an error nobody was waiting for: its name,
 * its message cut to {@link MAX_MESSAGE_LENGTH} characters and its stack
 * frames (code locations only), never the error's own fields, which for a
 * Redis error include the command's arguments.
 */
export function describeFailure(err: unknown): { name: string; message: string; stack?: string } {
  if (!(err instanceof Error)) return { name: typeof err, message: String(err).slice(0, MAX_MESSAGE_LENGTH) };
  const frames = err.stack?.split('\n').filter((line) => line.trimStart().startsWith('at ')).slice(0, 8).join('\n');
  return { name: err.name, message: err.message.slice(0, MAX_MESSAGE_LENGTH), ...(frames === undefined || frames === '' ? {} : { stack: frames }) };
}

import { pino, type Logger } from 'pino';

/** The process logger. Never pass it request bodies, prompts or credentials. */
export type { Logger };

/** Creates the structured JSON logger; authorization-like fields are redacted as a safety net. */
export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { service: 'switchyard' },
      redact: { paths: ['authorization', '*.authorization', 'apiKey', '*.apiKey', 'headers.authorization'], censor: '[redacted]' },
    },
    destination ?? process.stderr,
  );
}

/**
 * The OTLP exporter's headers (a collector's API key, a tenant id), read
 * from a secret file in the `OTEL_EXPORTER_OTLP_HEADERS` form on one line:
 * `name=value[,name=value...]`, values percent-encoded. Checked once at
 * start-up; a problem names the option and the file, never the content.
 */
import { ConfigError } from './load.ts';
import { readSecretFile } from './secret-file.ts';

/** An HTTP header name (RFC 9110 token). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * The headers in `path`, names in lower case.
 * @throws ConfigError naming `option` and `path` when the file cannot be read or an entry is not `name=value`.
 */
export function readExporterHeaders(path: string, option = 'tracing.headersFile'): Record<string, string> {
  const line = readSecretFile(path, option);
  const headers: Record<string, string> = {};
  line.split(',').forEach((entry, index) => {
    const eq = entry.indexOf('=');
    const name = entry.slice(0, Math.max(eq, 0)).trim().toLowerCase();
    if (eq <= 0 || !TOKEN.test(name)) throw new ConfigError(`${option} ${path}: entry ${index + 1} is not name=value (the OTEL_EXPORTER_OTLP_HEADERS form)`);
    let value: string;
    try {
      value = decodeURIComponent(entry.slice(eq + 1).trim());
    } catch {
      throw new ConfigError(`${option} ${path}: entry ${index + 1} has a value that is not percent-encoded properly`);
    }
    if (!/^[\x20-\x7e]*$/.test(value)) throw new ConfigError(`${option} ${path}: entry ${index + 1} decodes to a control or non-ASCII character`);
    headers[name] = value;
  });
  return headers;
}

/**
 * The standard OpenTelemetry variables (`OTEL_*`) as documented aliases of
 * `tracing.*` keys, so an operator who sets them for every service (or an
 * operator that injects them) configures switchyard too. Precedence: flags >
 * `SWITCHYARD_*` > `OTEL_*` > config file > defaults; a signal-specific
 * variable (`OTEL_EXPORTER_OTLP_TRACES_*`) wins over the general one, as in
 * every OpenTelemetry SDK.
 *
 * Not aliased: exporter headers (a secret: `tracing.headersFile`),
 * certificates and compression, which the OTLP exporter reads from the
 * environment itself, as in every SDK.
 */
/** One standard variable and the key it sets. */
export interface StandardVariable {
  readonly env: string;
  /** Dotted key it sets, e.g. `tracing.serviceName`. */
  readonly key: string;
  /** The key's value for a raw value; throws `invalid(message)` when unusable. */
  readonly parse: (raw: string, invalid: (message: string) => Error) => unknown;
}

const asString = (raw: string) => raw;
const asNumber = (raw: string, invalid: (message: string) => Error) => {
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value)) throw invalid(`expected a number, got ${JSON.stringify(raw.slice(0, 40))}`);
  return value;
};

/**
 * In precedence order within a key: a later entry for the same key wins
 * (the signal-specific variable after the general one).
 */
export const STANDARD_VARIABLES: readonly StandardVariable[] = [
  {
    env: 'OTEL_TRACES_EXPORTER',
    key: 'tracing.enabled',
    parse: (raw, invalid) => {
      const value = raw.trim();
      if (value === 'otlp') return true;
      if (value === 'none') return false;
      throw invalid(`switchyard exports traces over OTLP only: set otlp or none (got ${JSON.stringify(value.slice(0, 40))})`);
    },
  },
  // OTEL_SDK_DISABLED=true turns tracing off whatever OTEL_TRACES_EXPORTER says.
  { env: 'OTEL_SDK_DISABLED', key: 'tracing.enabled', parse: (raw) => (raw.trim().toLowerCase() === 'true' ? false : undefined) },
  { env: 'OTEL_EXPORTER_OTLP_ENDPOINT', key: 'tracing.endpoint', parse: asString },
  { env: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', key: 'tracing.tracesEndpoint', parse: asString },
  { env: 'OTEL_EXPORTER_OTLP_PROTOCOL', key: 'tracing.protocol', parse: asString },
  { env: 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', key: 'tracing.protocol', parse: asString },
  { env: 'OTEL_EXPORTER_OTLP_TIMEOUT', key: 'tracing.exportTimeoutMs', parse: asNumber },
  { env: 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT', key: 'tracing.exportTimeoutMs', parse: asNumber },
  { env: 'OTEL_SERVICE_NAME', key: 'tracing.serviceName', parse: asString },
  { env: 'OTEL_TRACES_SAMPLER', key: 'tracing.sampler', parse: asString },
  { env: 'OTEL_TRACES_SAMPLER_ARG', key: 'tracing.samplerArg', parse: asNumber },
  { env: 'OTEL_BSP_MAX_QUEUE_SIZE', key: 'tracing.maxQueueSize', parse: asNumber },
  { env: 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', key: 'tracing.maxExportBatchSize', parse: asNumber },
  { env: 'OTEL_BSP_SCHEDULE_DELAY', key: 'tracing.scheduleDelayMs', parse: asNumber },
];

/** The standard variables that set `key` (for the reference and check-config). */
export function standardVariablesOf(key: string): readonly string[] {
  return STANDARD_VARIABLES.filter((variable) => variable.key === key).map((variable) => variable.env);
}

/** Which standard variable set each key (the last one that did). */
export interface StandardSettings {
  readonly values: ReadonlyMap<string, unknown>;
  readonly setBy: ReadonlyMap<string, string>;
}

/**
 * The keys the standard variables in `env` set. An empty value counts as
 * unset, as in the OpenTelemetry SDKs. Throws what `invalid` makes for an
 * unusable value, naming the variable.
 */
export function readStandardVariables(env: Readonly<Record<string, string | undefined>>, invalid: (message: string) => Error): StandardSettings {
  const values = new Map<string, unknown>();
  const setBy = new Map<string, string>();
  for (const variable of STANDARD_VARIABLES) {
    const raw = env[variable.env];
    if (raw === undefined || raw.trim() === '') continue;
    const value = variable.parse(raw, (message) => invalid(`${variable.env}: ${message}`));
    if (value === undefined) continue;
    values.set(variable.key, value);
    setBy.set(variable.key, variable.env);
  }
  return { values, setBy };
}

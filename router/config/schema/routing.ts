/** The `routing` section: scheduling profiles, session and prefix affinity. */
import { z } from 'zod';

/** Preset scheduling profiles, selectable by name without defining them (router/scheduling/profiles/presets.ts). */
export const POLICY_NAMES = ['auto', 'least-load', 'session', 'round-robin', 'prefix-affinity'] as const;
const profileName = z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'profile names are lowercase words joined by dashes');

/** A plugin's own parameters; its registered schema checks them at config load (router/scheduling/profiles/registry.ts). */
const pluginParameters = z.record(z.string(), z.unknown()).describe("The plugin's own parameters, checked against its schema at load.");

/** A list of plugins of one kind, each by name or as {name, parameters}. */
const pluginList = (kind: string) =>
  z
    .array(
      z.union([
        z.string().min(1),
        z.strictObject({ name: z.string().min(1).describe(`${kind} name, one of those listed under Scheduling plugins in docs/configuration.md.`), parameters: pluginParameters.optional() }),
      ]),
    )
    .default([]);

const schedulingProfile = z
  .strictObject({
    filters: pluginList('Filter').describe(
      'Filters of the profile, run in order after the built-in ones (ready, not ejected, pinned response), by name or as {name, parameters}; each narrows the candidates and is passed over when it would keep none.',
    ),
    affinity: pluginList('Affinity walk').describe(
      'Affinity walks tried in order before the picker, by name or as {name, parameters}, e.g. ["session", {"name": "prefix", "parameters": {"spread": 3}}]; the walks and their parameters are listed under Scheduling plugins in docs/configuration.md.',
    ),
    picker: z.enum(['weighted-max', 'round-robin']).default('weighted-max').describe('What decides when no affinity walk applies: the weighted maximum of the scorers, or round-robin.'),
    scorers: z
      .array(
        z.strictObject({
          name: z.string().min(1).describe('Scorer name, one of those listed under Scheduling plugins in docs/configuration.md.'),
          weight: z.number().min(0).describe("Weight of the scorer's rating (in [0, 1]) in the sum; 0 leaves it out."),
          parameters: pluginParameters.optional(),
        }),
      )
      .min(1)
      .optional()
      .describe('Scorers of the weighted maximum, e.g. [{"name": "load-score", "weight": 1}, {"name": "kv-usage", "weight": 0.2}]. Default: least-load\'s (load-score 1, kv-usage 0.001). Not with weights.'),
    weights: z
      .strictObject({
        load: z.number().min(0).default(1).describe('Weight of the load score (1 / (1 + outstanding work over capacity)).'),
        kvUsage: z.number().min(0).default(0.001).describe('Weight of free KV cache (1 - usage).'),
      })
      .optional()
      .describe('The older form of scorers: the weights of load-score and kv-usage. Not with scorers.'),
    powerOfTwoChoices: z.boolean().default(false).describe('Weighted maximum over two random candidates instead of all (for very large fleets).'),
  })
  .superRefine((profile, ctx) => {
    if (profile.scorers !== undefined && profile.weights !== undefined) ctx.addIssue({ code: 'custom', path: ['weights'], message: 'give scorers or weights, not both (weights is the older form of scorers)' });
  });

const prefix = z
  .strictObject({
    epsilon: z.number().min(0).default(0.5).describe('Load bound headroom over the mean load score before prefix affinity yields.'),
    kappa: z.number().min(0).default(2).describe('Extra headroom per unit of cache credit (a candidate holding 8k cached tokens of the prompt may run this much hotter).'),
    spread: z.number().min(1).default(2).describe("Engines per prefix group: about spread x fleet size x the group's traffic share, so one prompt shared by everyone cannot pile onto one engine."),
    minReuse: z.number().min(0).max(1).default(0.1).describe("Below this share of prompt tokens a cache could serve (the model's recent traffic), a new prompt goes by least-load, unless its first 8 KiB are messages before the user's own (a document, instructions), which go to their home."),
    prefixBytes: z.number().int().min(1_024).max(64 * 1_024).default(64 * 1_024).describe('Bytes of canonical prompt read for prefix keys (bytes): the conversation key covers up to the first user message within it, block hashes the first 32 KiB.'),
    maxGroups: z.number().int().positive().default(4_096).describe('Prefix groups remembered per model (least recently seen evicted).'),
  })
  .prefault({})
  .describe('Prefix-cache affinity for requests without a session key (profiles with affinity `prefix`, e.g. the prefix-affinity preset).');

const routing = z
  .strictObject({
    policy: profileName
      .default('auto')
      .describe('Scheduling profile: a preset (auto: LoRA adapter affinity for a request naming an adapter, else session affinity when it has a session key, else prompt-prefix affinity, else least-load; least-load; session: LoRA adapter, else session key, else least-load (the default before prefix affinity); round-robin; prefix-affinity: the same as auto) or a name from `profiles`.'),
    modelPolicies: z
      .record(z.string().min(1), profileName)
      .default({})
      .describe('Profile per model, overriding `policy` (config file only), e.g. {"llama-3": "least-load"}.'),
    profiles: z
      .record(profileName, schedulingProfile)
      .default({})
      .describe('Named scheduling profiles (config file only), e.g. {"chat": {"affinity": ["prefix"], "scorers": [{"name": "load-score", "weight": 1}, {"name": "kv-usage", "weight": 0.2}]}}.'),
    sessionHeader: z.string().min(1).default('x-session-id').describe('Request header that carries the session key.'),
    sessionFromUser: z.boolean().default(true).describe("Use the body's OpenAI `user` field as the session key when the header is absent."),
    balanceEpsilon: z
      .number()
      .min(0)
      .default(0.25)
      .describe('Session affinity bounded load: spill to the next endpoint when the chosen one is above (1 + epsilon) x the mean load score.'),
    powerOfTwoChoices: z
      .boolean()
      .default(false)
      .describe('Preset profiles: compare two random endpoints instead of all (for very large fleets).'),
    prefix,
    defaultModel: z
      .string()
      .min(1)
      .optional()
      .describe('Model for requests that name none (multipart audio); defaults to the only model when the fleet serves one.'),
  })
  .superRefine((routing, ctx) => {
    const known = (name: string) => (POLICY_NAMES as readonly string[]).includes(name) || Object.hasOwn(routing.profiles, name);
    for (const name of Object.keys(routing.profiles)) {
      if ((POLICY_NAMES as readonly string[]).includes(name)) ctx.addIssue({ code: 'custom', path: ['profiles', name], message: `${name} is a preset; name the profile differently` });
    }
    if (!known(routing.policy)) ctx.addIssue({ code: 'custom', path: ['policy'], message: `unknown profile ${routing.policy}: use a preset (${POLICY_NAMES.join(', ')}) or a name from routing.profiles` });
    for (const [model, name] of Object.entries(routing.modelPolicies)) {
      if (!known(name)) ctx.addIssue({ code: 'custom', path: ['modelPolicies', model], message: `unknown profile ${name}` });
    }
  })
  .prefault({})
  .describe('Request routing.');

export { routing };

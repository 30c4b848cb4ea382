/** The `upstream` section: how the router talks to the engines (engine key, retries, connections). */
import { z } from 'zod';

export const upstream = z
  .strictObject({
    apiKey: z
      .string()
      .min(1)
      .regex(/^[\x20-\x7e]+$/, 'must be printable ASCII on one line')
      .optional()
      .describe(
        'API key sent as "Authorization: Bearer" to the static backends and the discovery.mode source\'s endpoints, unless they set their own (discovery.static.apiKey, discovery.apiKey); never to discovery.sources entries. Never logged. Prefer apiKeyFile.',
      ),
    apiKeyFile: z
      .string()
      .min(1)
      .optional()
      .describe("File holding that API key alone on one line of printable ASCII (surrounding whitespace trimmed); checked at start-up, which fails otherwise. Wins over apiKey."),
    forwardClientAuthorization: z
      .boolean()
      .optional()
      .describe("Forward the client's Authorization header to endpoints whose source has no engine API key (a source's own key, or this section's for the static and discovery.mode sources, always replaces the client's header). Default: true, or false when auth.apiKeysFile is set (the header then authenticates the client to switchyard; setting both is a start-up error)."),
    retry: z.boolean().default(true).describe('Retry once on another endpoint when the connection fails before any response byte.'),
    retryBudgetRatio: z
      .number()
      .min(0)
      .max(1)
      .default(0.2)
      .describe('Retries in progress may be at most this share of open requests (a retry storm cannot double the load).'),
    retryBudgetMin: z.number().int().min(0).default(3).describe('Retries always allowed in progress at once, whatever the ratio.'),
    connectionsPerEndpoint: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        'Max open upstream connections per endpoint (default: the router-wide admission.maxInFlight). Every open request holds one, so an endpoint at this many counts as saturated: requests queue or shed visibly instead of waiting unseen for a connection.',
      ),
  })
  .prefault({})
  .describe('How the router talks to the engines.');

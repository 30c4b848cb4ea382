/** The `auth` section: API-key authentication on the traffic port. */
import { z } from 'zod';
import { filePath, positiveMs } from './fields.ts';

export const auth = z
  .strictObject({
    apiKeysFile: filePath
      .optional()
      .describe('File of API keys the traffic port then requires (YAML or JSON: keys with their tenant, tenants with their quotas; see docs/shared-state.md). Reloaded when it changes. Unset: no authentication.'),
    reloadIntervalMs: positiveMs.default(5_000).describe('How often apiKeysFile is checked for changes (ms).'),
    tenantCacheSalt: z
      .boolean()
      .default(true)
      .describe(
        "With apiKeysFile: set vLLM's cache_salt on /v1/chat/completions and /v1/completions bodies from the tenant (combined with the client's own cache_salt), so tenants never share prefix-cache blocks and one cannot time another's cached prefixes. The one change the router makes to a body: a member appended to the JSON object. Turn it off for engines that refuse the field.",
      ),
  })
  .prefault({})
  .describe('API-key authentication on the traffic port (/livez, /readyz and the admin port never need it).');

/** The `inferenceExtension` section: InferenceObjective priorities and model rewrites (Gateway API Inference Extension). */
import { z } from 'zod';

const rewriteRule = z.strictObject({
  matches: z
    .array(z.strictObject({ model: z.strictObject({ type: z.literal('Exact').default('Exact'), value: z.string().min(1).describe('The requested model name the rule matches.') }) }))
    .max(64)
    .default([])
    .describe('Requested model names the rule matches exactly; none: every model (a generic rule, which an exact match elsewhere beats).'),
  targets: z
    .array(
      z.strictObject({
        modelRewrite: z.string().min(1).describe('The model name the request is sent with instead.'),
        weight: z.number().int().min(1).max(1_000_000).optional().describe("Relative weight among the rule's targets; unset on all: an even split."),
      }),
    )
    .min(1)
    .max(64)
    .describe('Where matching requests go, split by weight; a session key keeps its target.'),
});

export const inferenceExtension = z
  .strictObject({
    objectiveHeader: z
      .string()
      .min(1)
      .regex(/^[!#$%&'*+.^_`|~0-9a-z-]+$/, 'a lower-case HTTP header name')
      .default('x-gateway-inference-objective')
      .describe(
        "Request header naming an InferenceObjective of a watched InferencePool; the objective's priority sets the request's priority class. Honoured only from server.trustedProxies, as the priority header; the priority header, when also sent, wins. An unknown name counts as normal (switchyard_inference_objective_unknown_total).",
      ),
    highPriorityAbove: z.number().int().default(0).describe('An objective priority above this runs as high (shed last, first out of the queue).'),
    lowPriorityBelow: z.number().int().default(0).describe('An objective priority below this runs as low (shed first); between the two, and unset, normal.'),
    modelRewrites: z
      .array(
        z.strictObject({
          name: z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'a DNS label').describe('Names the rules in the access log, /debug/endpoints and metrics (as config/<name>).'),
          rules: z.array(rewriteRule).min(1).max(64).describe("InferenceModelRewrite's spec.rules."),
        }),
      )
      .default([])
      .describe(
        'Model rewrites from the config file, in the shape of InferenceModelRewrite\'s spec (for installs without the CRDs, or without a cluster), e.g. [{"name": "canary", "rules": [{"matches": [{"model": {"value": "chat"}}], "targets": [{"modelRewrite": "chat-v1", "weight": 90}, {"modelRewrite": "chat-v2", "weight": 10}]}]}]. They rank with the cluster\'s as the oldest, in this order.',
      ),
  })
  .superRefine((value, ctx) => {
    if (value.lowPriorityBelow > value.highPriorityAbove + 1) ctx.addIssue({ code: 'custom', path: ['lowPriorityBelow'], message: 'must not be above highPriorityAbove + 1 (a priority cannot be both high and low)' });
  })
  .prefault({})
  .describe('Gateway API Inference Extension objects used at request time: InferenceObjective priorities (from the InferencePool sources\' namespaces) and model rewrites (InferenceModelRewrite, and these from the config file).');

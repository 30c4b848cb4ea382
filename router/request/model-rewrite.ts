/**
 * Model rewrites (InferenceModelRewrite, and the same rules from the config
 * file): a request for a model a rule matches is sent, and scheduled, as one
 * of the rule's targets, chosen by weight. Canaries, adapter roll-outs and
 * aliases are rules.
 *
 * Which rule applies follows the API's precedence: a rule that names the
 * model exactly beats a generic one (no `matches`); among equals the oldest
 * object wins (the config file's count as oldest), then the earlier rule in
 * its list. Which target: with a session key, a hash of the key and the rule,
 * so a conversation keeps its target (and its engine's cache) across
 * requests while distinct keys still split by weight; without one, a random
 * draw.
 *
 * The table is rebuilt whenever the rules change (rarely), so a request
 * costs one map lookup, and one hash when it has a key.
 */
import { oldestFirst, type RewriteRules, type RewriteTarget } from '../../discovery/kubernetes/inference-objects.ts';
import { hashString, mix32 } from '../load/hash.ts';
import type { Random } from '../scheduling/candidate.ts';

/** A request's rewrite: the model it is sent as, and the rules that said so. */
export interface ModelRewrite {
  readonly model: string;
  /** Id of the rules (`namespace/name`, or `config/<name>`). */
  readonly rule: string;
}

/** One rule ready for requests: its targets' cumulative weights over [0, 1). */
interface ReadyRule {
  readonly id: string;
  /** Seeds the session-key hash, so one key's draws for two rules are independent. */
  readonly seed: number;
  readonly models: readonly string[];
  /** Upper bound of each target's share of [0, 1), ascending; the last is 1. */
  readonly bounds: readonly number[];
}

/** The rewrite rules in force; swap them with {@link ModelRewrites.set}. */
export class ModelRewrites {
  #exact = new Map<string, ReadyRule>();
  #generic: ReadyRule | undefined;
  #rules: readonly RewriteRules[] = [];
  readonly #random: Random;
  readonly #counted: (rule: string, target: string) => void;

  /** `counted` hears every rewrite (for a metric); it must not throw. */
  constructor(random: Random = Math.random, counted: (rule: string, target: string) => void = () => undefined) {
    this.#random = random;
    this.#counted = counted;
  }

  /** Replaces the rules: `configured` (the config file's, oldest) then `cluster` (the InferenceModelRewrites). */
  set(configured: readonly RewriteRules[], cluster: readonly RewriteRules[]): void {
    const ordered = [...configured, ...[...cluster].sort(oldestFirst((rules) => rules.id))];
    const exact = new Map<string, ReadyRule>();
    let generic: ReadyRule | undefined;
    for (const rules of ordered) {
      for (const rule of rules.rules) {
        const ready = readyRule(rules.id, rule.targets);
        if (rule.matches.length === 0) generic ??= ready;
        for (const model of rule.matches) if (!exact.has(model)) exact.set(model, ready);
      }
    }
    this.#exact = exact;
    this.#generic = generic;
    this.#rules = ordered;
  }

  /** The rules in force, in precedence order (for `/debug/endpoints`). */
  get rules(): readonly RewriteRules[] {
    return this.#rules;
  }

  /**
   * The rewrite of a request for `model`, or undefined when no rule matches.
   * `sessionKey` is the client's own key (header or `user`), which keeps one
   * conversation on one target.
   */
  rewrite(model: string, sessionKey: string | undefined): ModelRewrite | undefined {
    const rule = this.#exact.get(model) ?? this.#generic;
    if (rule === undefined) return undefined;
    const draw = sessionKey === undefined ? this.#random() : mix32(hashString(sessionKey), rule.seed) / 2 ** 32;
    let i = 0;
    while (i < rule.bounds.length - 1 && draw >= (rule.bounds[i] as number)) i++;
    const target = rule.models[i] as string;
    this.#counted(rule.id, target);
    return { model: target, rule: rule.id };
  }
}

/**
 * Cumulative bounds of the targets' weights. Without weights the targets
 * share evenly; a target without a weight beside weighted ones counts as 1.
 */
function readyRule(id: string, targets: readonly RewriteTarget[]): ReadyRule {
  const weights = targets.map((target) => target.weight ?? 1);
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  let running = 0;
  const bounds = weights.map((weight) => (running += weight) / total);
  bounds[bounds.length - 1] = 1;
  return { id, seed: hashString(id), models: targets.map((target) => target.model), bounds };
}

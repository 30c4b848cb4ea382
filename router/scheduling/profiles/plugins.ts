/**
 * The built-in scheduling plugins, registered by name: one line each. A new
 * scorer is its plugin file in scorers/ (the scorer and its `ScorerPlugin`),
 * one line here, and its test.
 */
import { kvUsagePlugin } from '../scorers/kv-usage.ts';
import { loadScorePlugin } from '../scorers/load-score.ts';
import { loraAffinityPlugin } from '../scorers/lora-affinity.ts';
import { prefixAffinityPlugin } from '../scorers/prefix-affinity.ts';
import { sessionAffinityPlugin } from '../scorers/session-rendezvous.ts';
import { PluginRegistry } from './registry.ts';

/** A fresh registry of the built-in plugins (a caller may register more on it). */
export function builtInPlugins(): PluginRegistry {
  return new PluginRegistry()
    .registerScorer(loadScorePlugin)
    .registerScorer(kvUsagePlugin)
    .registerAffinity(sessionAffinityPlugin)
    .registerAffinity(prefixAffinityPlugin)
    .registerAffinity(loraAffinityPlugin);
}

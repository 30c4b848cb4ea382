/**
 * Checks on the alert rules that promtool cannot make: every alert carries
 * what an on-call engineer needs (severity, summary, description, a runbook
 * link to a heading that exists), every alert has a fixture where it fires
 * and one where it does not, every metric a rule reads is one the router
 * exports (a rename must break this test, not the alert), and the TTFT SLO
 * threshold is one of the histogram's bucket bounds (a threshold between
 * bounds silently reads the next one down).
 *
 * promtool itself (check rules, test rules with these fixtures) runs in
 * `npm run test:alerts` before this file.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { TTFT_BUCKETS_S } from '../../router/metrics/metrics.ts';
import { routerMetricCatalog } from '../../charts/router-metric-catalog.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '../..');
const RULES_PATH = join(ROOT, 'charts/switchyard/alerts/switchyard-rules.yaml');
const RUNBOOK_PATH = join(ROOT, 'docs/operations.md');
const RUNBOOK_BASE = 'https://github.com/switchyard/switchyard/blob/main/docs/operations.md#';
const SEVERITIES = new Set(['critical', 'warning', 'info']);
/** Metrics the rules read that the router does not export, and who does. */
const EXTERNAL_METRICS = new Map([
  ['kube_pod_owner', 'kube-state-metrics'],
  ['kube_replicaset_owner', 'kube-state-metrics'],
  ['kube_deployment_spec_replicas', 'kube-state-metrics'],
  ['kube_deployment_status_replicas_available', 'kube-state-metrics'],
]);

interface Rule {
  readonly alert?: string;
  readonly record?: string;
  readonly expr: string;
  readonly for?: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
}

interface RuleFile {
  readonly groups: readonly { readonly name: string; readonly rules: readonly Rule[] }[];
}

interface Fixture {
  readonly rule_files: readonly string[];
  readonly tests: readonly {
    readonly name?: string;
    readonly alert_rule_test?: readonly { readonly alertname: string; readonly exp_alerts?: readonly unknown[] | null }[];
  }[];
}

const rules = (parse(readFileSync(RULES_PATH, 'utf8')) as RuleFile).groups.flatMap((g) => g.rules);
const alerts = rules.filter((r): r is Rule & { alert: string } => r.alert !== undefined);
const recorded = new Set(rules.flatMap((r) => (r.record === undefined ? [] : [r.record])));
const fixtureFiles = readdirSync(HERE).filter((f) => f.endsWith('.yaml'));

/** GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces to hyphens. */
function githubAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Every heading anchor of a Markdown file, with GitHub's -1, -2 suffixes for repeats. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const match = fenced ? null : /^#{1,6}\s+(.*)$/.exec(line);
    if (match?.[1] === undefined) continue;
    const base = githubAnchor(match[1]);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

describe('alert rules', () => {
  it('has the alerts the runbook promises', () => {
    assert.ok(alerts.length >= 10, `${alerts.length} alerts`);
    assert.equal(new Set(alerts.map((a) => a.alert)).size, alerts.length, 'alert names are unique');
  });

  for (const alert of alerts) {
    it(`${alert.alert}: severity, summary, description and a runbook link`, () => {
      assert.ok(SEVERITIES.has(alert.labels?.severity ?? ''), `severity ${alert.labels?.severity}`);
      for (const key of ['summary', 'description', 'runbook_url']) assert.ok((alert.annotations?.[key] ?? '').trim().length > 0, `annotation ${key}`);
      assert.match(alert.annotations?.description ?? '', /\{\{ *\$(labels|value)/, 'the description says which series and how bad ($labels / $value)');
      assert.equal(alert.annotations?.runbook_url, RUNBOOK_BASE + alert.alert.toLowerCase());
      assert.ok(alert.for !== undefined, 'every alert waits (for:) before firing');
    });
  }

  it('links every runbook_url to a heading of docs/operations.md, one "### <AlertName>" each under "## Alerts"', () => {
    const markdown = readFileSync(RUNBOOK_PATH, 'utf8');
    const anchors = anchorsOf(markdown);
    const section = markdown.split(/^## Alerts$/m)[1]?.split(/^## /m)[0];
    assert.ok(section !== undefined, 'docs/operations.md has a "## Alerts" section');
    for (const alert of alerts) {
      const anchor = (alert.annotations?.runbook_url ?? '').slice(RUNBOOK_BASE.length);
      assert.ok(anchors.has(anchor), `docs/operations.md has no heading with anchor #${anchor}`);
      assert.match(section, new RegExp(`^### ${alert.alert}$`, 'm'), `"### ${alert.alert}" in the Alerts section`);
    }
    for (const [, anchor] of markdown.matchAll(/\]\(#([^)]+)\)/g)) assert.ok(anchors.has(anchor ?? ''), `link to #${anchor} has no heading`);
  });

  it('reads only metrics the router exports (or kube-state-metrics, named here) and rules recorded in the file', async () => {
    const exported = new Set((await routerMetricCatalog()).keys());
    for (const rule of rules) {
      for (const [name] of rule.expr.matchAll(/(?<![\w:])(?:switchyard|kube)_\w+/g)) {
        assert.ok(exported.has(name) || EXTERNAL_METRICS.has(name), `${rule.alert ?? rule.record} reads ${name}, which nothing exports`);
      }
      for (const [name] of rule.expr.matchAll(/(?<![\w:])\w+:\w+:\w+/g)) {
        assert.ok(recorded.has(name), `${rule.alert ?? rule.record} reads ${name}, which no rule records`);
      }
    }
  });

  it('takes the TTFT SLO threshold from a bucket bound of the histogram, the same everywhere, with one error budget', () => {
    const bounds = new Set(TTFT_BUCKETS_S.map(String));
    const thresholds = new Set<string>();
    const budgets = new Set<string>();
    for (const rule of rules) {
      for (const match of rule.expr.matchAll(/switchyard_time_to_first_token_seconds_bucket\{le="([^"]+)"\}/g)) thresholds.add(match[1] ?? '');
      for (const match of rule.expr.matchAll(/\((14\.4|6) \* ([\d.]+)\)/g)) budgets.add(match[2] ?? '');
    }
    assert.equal(thresholds.size, 1, `one threshold: ${[...thresholds].join(', ')}`);
    const [threshold] = thresholds;
    assert.ok(bounds.has(threshold ?? ''), `le="${threshold}" is one of ${[...bounds].join(', ')}`);
    assert.deepEqual([...budgets], ['0.01'], 'both burn rates use the budget of a 99% objective');
    for (const alert of alerts.filter((a) => a.alert.startsWith('SwitchyardTTFT'))) {
      assert.ok(alert.annotations?.description?.includes(`${threshold} s`), `${alert.alert} names the threshold`);
      assert.ok(alert.annotations?.description?.includes('allows 1%'), `${alert.alert} names the budget`);
    }
  });

  it('has, for every alert, a fixture where it fires and one where it does not', () => {
    const firing = new Set<string>();
    const quiet = new Set<string>();
    for (const file of fixtureFiles) {
      const fixture = parse(readFileSync(join(HERE, file), 'utf8')) as Fixture;
      assert.deepEqual(
        fixture.rule_files.map((f) => resolve(HERE, f)),
        [RULES_PATH],
        `${file} tests the chart's rule file`,
      );
      for (const test of fixture.tests) {
        for (const check of test.alert_rule_test ?? []) {
          assert.ok(alerts.some((a) => a.alert === check.alertname), `${file}: ${check.alertname} is not an alert of the rule file`);
          ((check.exp_alerts ?? []).length > 0 ? firing : quiet).add(check.alertname);
        }
      }
    }
    for (const alert of alerts) {
      assert.ok(firing.has(alert.alert), `${alert.alert} has no fixture where it fires`);
      assert.ok(quiet.has(alert.alert), `${alert.alert} has no fixture where it stays quiet`);
    }
  });
});

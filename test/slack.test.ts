// core/slack.ts: webhook messages in Slack's incoming-webhook shape, per event type (pure).
import t, { type Test } from 'tap'
import { escapeMrkdwn, slackMessage, type SlackMessage } from '../core/slack.ts'
import { triggeredAlert } from './helpers/alert-data.ts'

const at = '2026-11-25T09:00:00.000Z'
const project = { id: 'prj_1', slug: 'acme', name: 'Acme <App>' }

/** Slack's shape: text, and blocks of section (mrkdwn text, ≤ 10 fields) or context (≤ 10 mrkdwn elements). */
function checkShape(t: Test, m: SlackMessage) {
  t.same(Object.keys(m), ['text', 'blocks'])
  t.type(m.text, 'string')
  t.ok(m.text.length > 0 && m.text.length < 3000, 'a notification line')
  t.ok(m.blocks.length >= 1 && m.blocks.length <= 50)
  for (const b of m.blocks) {
    if (b.type === 'section') {
      t.equal(b.text.type, 'mrkdwn')
      t.ok(b.text.text.length <= 3000)
      t.ok((b.fields ?? []).length <= 10 && (b.fields ?? []).every((f) => f.type === 'mrkdwn' && f.text.length <= 2000))
    } else {
      t.equal(b.type, 'context')
      t.ok(b.elements.length >= 1 && b.elements.length <= 10 && b.elements.every((e) => e.type === 'mrkdwn'))
    }
  }
}

t.test('mrkdwn: &, < and > escaped, nothing else', async (t) => {
  t.equal(escapeMrkdwn('a < b & c > d *bold*'), 'a &lt; b &amp; c &gt; d *bold*')
})

t.test('alert.triggered and alert.resolved', async (t) => {
  const data = triggeredAlert(project, at)
  const m = slackMessage({ type: 'alert.triggered', timestamp: at, data })
  checkShape(t, m)
  t.equal(m.text, 'Alert triggered: Signups dropped in Acme &lt;App&gt;, registrations = 3')
  t.match(m.blocks[0], { type: 'section', text: { text: ':rotating_light: *Alert “Signups dropped” triggered* in *Acme &lt;App&gt;*' } })
  t.same((m.blocks[0] as { fields: { text: string }[] }).fields.map((f) => f.text), ['*Metric*\nregistrations', '*Value*\n3', '*Condition*\nbelow 10', '*Day*\n2026-11-24'])
  const r = slackMessage({ type: 'alert.resolved', timestamp: at, data: { ...data, kind: 'resolved', value: 14, alert: { ...data.alert, metric: 'event_count', event: 'checkout', condition: 'anomaly', threshold: null } } })
  checkShape(t, r)
  t.match(r.text, /^Alert resolved: Signups dropped in Acme &lt;App&gt;, event_count \(checkout\) = 14$/)
  t.match(r.blocks[0], { text: { text: /:white_check_mark: \*Alert “Signups dropped” resolved\*/ } })
})

t.test('digest.ready: the figures with their change, events, top new opportunities, alerts', async (t) => {
  const data = {
    project: { ...project, timezone: 'Europe/Paris' },
    frequency: 'weekly',
    period: { from: '2026-11-16', to: '2026-11-22' },
    previous: { from: '2026-11-09', to: '2026-11-15' },
    metrics: {
      registrations: { value: 120, previous: 100, change: 0.2 },
      daily_users: { value: 40, previous: 0, change: null },
      events: [{ event: 'checkout', count: 90, previous: 100, change: -0.1 }],
    },
    opportunities: { new: 4, pending: 7, adopted: 1, top_new: [{ event_id: 'opp_1', key_information: 'A partner wants <a bundle>' }] },
    alerts: [{ id: 'ale_1', name: 'Signups dropped', kind: 'triggered', day: '2026-11-18', value: 3 }],
    generated_at: at,
  }
  const m = slackMessage({ type: 'digest.ready', timestamp: at, data })
  checkShape(t, m)
  t.equal(m.text, 'Weekly digest for Acme &lt;App&gt; (2026-11-16 – 2026-11-22): 120 registrations, 40 daily users, 4 new opportunities')
  const all = JSON.stringify(m.blocks)
  t.match(all, /\*Registrations\*\\n120 \(\+20 %, was 100\)/)
  t.match(all, /\*Daily users\*\\n40 \(was 0\)/)
  t.match(all, /`checkout` 90 \(-10 %, was 100\)/)
  t.match(all, /A partner wants &lt;a bundle&gt; \(`opp_1`\)/)
  t.match(all, /Signups dropped triggered on 2026-11-18 \(3\)/)
  const empty = slackMessage({ type: 'digest.ready', timestamp: at, data: { ...data, frequency: 'daily', metrics: { ...data.metrics, events: [] }, opportunities: { new: 0, pending: 0, adopted: 0, top_new: [] }, alerts: [] } })
  checkShape(t, empty)
  t.equal(empty.blocks.length, 2, 'no empty sections')
  t.match(empty.text, /^Daily digest/)
})

t.test('the other events: one short line; any other type: a generic one', async (t) => {
  const opportunity = { event_id: 'opp_1', contribution_type: 'partnership', key_information: 'x'.repeat(500), status: 'pending', evaluation: '' }
  const cases: [string, unknown, RegExp][] = [
    ['opportunity.submitted', opportunity, /^New opportunity \(partnership\) `opp_1`: x{199}…$/],
    ['opportunity.reviewed', { ...opportunity, status: 'adopted', review: { after: { status: 'adopted', evaluation: 'useful' } } }, /^Opportunity reviewed `opp_1`: status adopted, useful: /],
    ['opportunity.merged', { ...opportunity, report_count: 3, merge: { sources: ['opp_2', 'opp_3'] } }, /into `opp_1`: 2 merged, 3 reports/],
    ['opportunity.unmerged', { ...opportunity, unmerge: { target: 'opp_9' } }, /`opp_1` from `opp_9`/],
    ['opportunity.tagged', { ...opportunity, tags: ['pricing', 'q4'] }, /`opp_1`: `pricing` `q4`/],
    ['opportunity.assigned', { ...opportunity, assignment: { after: { assignee: 'kim@example.com' } } }, /assigned to kim@example.com/],
    ['comment.created', { id: 'cmt_1', event_id: 'opp_1', body: 'Call them <today>' }, /^New comment on `opp_1`: Call them &lt;today&gt;$/],
    ['memory.forgotten', { id: 'mem_1', content: 'Pricing page converts on Tuesdays' }, /^Memory forgotten: Pricing page/],
    ['project.updated', { id: 'prj_1', slug: 'acme', name: 'Acme' }, /^Project card updated: Acme$/],
    ['tag.renamed', { name: 'pricing', previous_name: 'price', opportunities: 12 }, /`price` → `pricing` \(12 opportunities\)/],
    ['webhook.test', {}, /Test message/],
    ['something.new', { any: 'thing' }, /^something\.new in growthdesk$/],
  ]
  for (const [type, data, text] of cases) {
    const m = slackMessage({ type, timestamp: at, data })
    checkShape(t, m)
    t.match(m.text, text, type)
    t.notMatch(m.text, /\*/, `${type}: the notification line has no mrkdwn markers`)
    t.match(m.blocks.at(-1), { type: 'context', elements: [{ text: new RegExp(`\`${type.replace('.', '\\.')}\``) }] })
  }
  checkShape(t, slackMessage({ type: 'opportunity.submitted', timestamp: at, data: null }))
})

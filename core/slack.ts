// Webhook messages in Slack's incoming-webhook shape (a subscription's `format: "slack"`): a
// `text` (the notification's line, and what clients without blocks show) and `blocks` of Block
// Kit with mrkdwn, rendered per event type from the Standard Webhooks envelope; pure, no I/O.
// Shape: https://docs.slack.dev/messaging/sending-messages-using-incoming-webhooks
// Text: https://docs.slack.dev/messaging/formatting-message-text (&, < and > escaped; *bold*, `code`).

export interface SlackText { type: 'mrkdwn'; text: string }
export type SlackBlock =
  | { type: 'section'; text: SlackText; fields?: SlackText[] }
  | { type: 'context'; elements: SlackText[] }
export interface SlackMessage { text: string; blocks: SlackBlock[] }

/** What the outbox holds: the Standard Webhooks envelope. */
export interface Envelope { type: string; timestamp: string; data: unknown }

/** Block Kit's limits: a section's text 3000 characters, a field 2000, a context 10 elements. */
const SECTION_MAX = 3000
const FIELD_MAX = 2000

type Rec = Record<string, unknown>
const rec = (v: unknown): Rec => (v !== null && typeof v === 'object' && !Array.isArray(v) ? v as Rec : {})
const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : '')
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null)

/** Text as mrkdwn shows it literally: Slack's three control characters escaped. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`
}

/** Plain text cut to `max` characters, then escaped (an escape is never cut in half). */
const esc = (text: string, max = 200) => escapeMrkdwn(clip(text.replace(/\s+/g, ' ').trim(), max))

const section = (text: string, fields?: string[]): SlackBlock => ({
  type: 'section',
  text: { type: 'mrkdwn', text: clip(text, SECTION_MAX) },
  ...(fields && fields.length > 0 ? { fields: fields.slice(0, 10).map((f) => ({ type: 'mrkdwn' as const, text: clip(f, FIELD_MAX) })) } : {}),
})
const context = (...lines: string[]): SlackBlock => ({ type: 'context', elements: lines.filter(Boolean).slice(0, 10).map((text) => ({ type: 'mrkdwn' as const, text })) })

/** A count and its change from the previous period: `120 (+20 %, was 100)`. */
function withChange(value: unknown, previous: unknown): string {
  const v = num(value)
  const p = num(previous)
  if (v === null) return '—'
  if (p === null) return String(v)
  if (p === 0) return `${v} (was 0)`
  const pct = Math.round(((v - p) / p) * 100)
  return `${v} (${pct >= 0 ? '+' : ''}${pct} %, was ${p})`
}

function alertMessage(type: string, data: Rec): SlackMessage {
  const alert = rec(data.alert)
  const project = rec(data.project)
  const triggered = type === 'alert.triggered'
  const name = esc(str(alert.name) || str(alert.id) || 'alert')
  const metric = esc(str(alert.metric)) + (alert.event ? ` (${esc(str(alert.event))})` : '')
  const condition = [str(alert.condition), str(alert.threshold)].filter(Boolean).join(' ')
  const where = esc(str(project.name) || str(project.slug))
  const value = str(data.value)
  const head = triggered ? `:rotating_light: *Alert “${name}” triggered*` : `:white_check_mark: *Alert “${name}” resolved*`
  return {
    text: `${triggered ? 'Alert triggered' : 'Alert resolved'}: ${name}${where ? ` in ${where}` : ''}, ${metric} = ${esc(value)}`,
    blocks: [
      section(`${head}${where ? ` in *${where}*` : ''}`, [
        `*Metric*\n${metric || '—'}`,
        `*Value*\n${esc(value) || '—'}`,
        `*Condition*\n${esc(condition) || '—'}`,
        `*Day*\n${esc(str(data.day)) || '—'}`,
      ]),
      context(`growthdesk · \`${esc(str(alert.id))}\` · ${esc(str(data.at) || '')}`),
    ],
  }
}

function digestMessage(data: Rec): SlackMessage {
  const project = rec(data.project)
  const period = rec(data.period)
  const metrics = rec(data.metrics)
  const registrations = rec(metrics.registrations)
  const users = rec(metrics.daily_users)
  const events = Array.isArray(metrics.events) ? metrics.events.map(rec) : []
  const opportunities = rec(data.opportunities)
  const topNew = Array.isArray(opportunities.top_new) ? opportunities.top_new.map(rec) : []
  const alerts = Array.isArray(data.alerts) ? data.alerts.map(rec) : []
  const frequency = str(data.frequency) === 'weekly' ? 'Weekly' : 'Daily'
  const name = esc(str(project.name) || str(project.slug))
  const range = `${esc(str(period.from))} – ${esc(str(period.to))}`
  const blocks: SlackBlock[] = [
    section(`:bar_chart: *${frequency} digest: ${name}* (${range})`, [
      `*Registrations*\n${withChange(registrations.value, registrations.previous)}`,
      `*Daily users*\n${withChange(users.value, users.previous)}`,
      `*New opportunities*\n${num(opportunities.new) ?? 0}`,
      `*Pending / adopted*\n${num(opportunities.pending) ?? 0} / ${num(opportunities.adopted) ?? 0}`,
    ]),
  ]
  if (events.length > 0) {
    blocks.push(section(`*Events*\n${events.slice(0, 10).map((e) => `• \`${esc(str(e.event), 64)}\` ${withChange(e.count, e.previous)}`).join('\n')}`))
  }
  if (topNew.length > 0) {
    blocks.push(section(`*Top new opportunities*\n${topNew.slice(0, 5).map((o) => `• ${esc(str(o.key_information), 150)} (\`${esc(str(o.event_id))}\`)`).join('\n')}`))
  }
  if (alerts.length > 0) {
    blocks.push(section(`*Alerts*\n${alerts.slice(0, 10).map((a) => `• ${esc(str(a.name))} ${esc(str(a.kind))} on ${esc(str(a.day))} (${esc(str(a.value))})`).join('\n')}`))
  }
  blocks.push(context(`growthdesk · ${esc(str(data.generated_at))}`))
  return {
    text: `${frequency} digest for ${name} (${range}): ${num(registrations.value) ?? 0} registrations, ${num(users.value) ?? 0} daily users, ${num(opportunities.new) ?? 0} new opportunities`,
    blocks,
  }
}

/** One line for the events of the other resources: what happened, to what. */
function line(type: string, data: Rec): string | null {
  const opp = `\`${esc(str(data.event_id))}\``
  const key = esc(str(data.key_information), 200)
  switch (type) {
    case 'opportunity.submitted':
      return `:bulb: *New opportunity* (${esc(str(data.contribution_type))}) ${opp}: ${key}`
    case 'opportunity.reviewed': {
      const after = rec(rec(data.review).after)
      const evaluation = str(after.evaluation ?? data.evaluation)
      return `:memo: *Opportunity reviewed* ${opp}: status *${esc(str(after.status ?? data.status))}*${evaluation ? `, ${esc(evaluation)}` : ''}: ${key}`
    }
    case 'opportunity.merged': {
      const sources = rec(data.merge).sources
      return `:twisted_rightwards_arrows: *Opportunities merged* into ${opp}: ${Array.isArray(sources) ? sources.length : 0} merged, ${num(data.report_count) ?? '?'} reports`
    }
    case 'opportunity.unmerged':
      return `:leftwards_arrow_with_hook: *Opportunity unmerged* ${opp} from \`${esc(str(rec(data.unmerge).target))}\``
    case 'opportunity.tagged': {
      const tags = Array.isArray(data.tags) ? data.tags.map(str) : []
      return `:label: *Opportunity tagged* ${opp}: ${tags.length > 0 ? tags.map((t) => `\`${esc(t, 64)}\``).join(' ') : 'no tags'}`
    }
    case 'opportunity.assigned': {
      const assignee = str(rec(rec(data.assignment).after).assignee)
      return `:bust_in_silhouette: *Opportunity ${assignee ? `assigned to ${esc(assignee)}` : 'unassigned'}* ${opp}`
    }
    case 'comment.created':
    case 'comment.edited':
    case 'comment.deleted': {
      const verb = type === 'comment.created' ? 'New comment' : type === 'comment.edited' ? 'Comment edited' : 'Comment deleted'
      const body = esc(str(data.body), 200)
      return `:speech_balloon: *${verb}* on ${opp}${body ? `: ${body}` : ''}`
    }
    case 'memory.added':
    case 'memory.updated':
    case 'memory.forgotten': {
      const verb = type === 'memory.added' ? 'Memory added' : type === 'memory.updated' ? 'Memory updated' : 'Memory forgotten'
      return `:brain: *${verb}*: ${esc(str(data.content), 200)}`
    }
    case 'project.updated':
      return `:card_index: *Project card updated*: ${esc(str(data.name) || str(data.slug))}`
    case 'tag.renamed':
      return `:label: *Tag renamed* \`${esc(str(data.previous_name), 64)}\` → \`${esc(str(data.name), 64)}\` (${num(data.opportunities) ?? 0} opportunities)`
    case 'tag.deleted':
      return `:label: *Tag deleted* \`${esc(str(data.name), 64)}\` (${num(data.opportunities) ?? 0} opportunities)`
    case 'webhook.test':
      return ':wave: *Test message* from growthdesk: this Slack webhook works.'
    default:
      return null
  }
}

/** The Slack message for a webhook message: per event type, and a generic line for any other. */
export function slackMessage(envelope: Envelope): SlackMessage {
  const data = rec(envelope.data)
  if (envelope.type === 'alert.triggered' || envelope.type === 'alert.resolved') return alertMessage(envelope.type, data)
  if (envelope.type === 'digest.ready') return digestMessage(data)
  const text = line(envelope.type, data) ?? `*${esc(envelope.type, 100)}* in growthdesk`
  return {
    // The notification line: the same words without mrkdwn's markers.
    text: text.replace(/:[a-z_]+: /, '').replace(/\*/g, ''),
    blocks: [section(text), context(`growthdesk · \`${esc(envelope.type, 100)}\` · ${esc(envelope.timestamp)}`)],
  }
}

// `growthdesk admin seed-demo --project P`: realistic opportunities, reviews, memories and
// 30 days of events, so a new deployment has something to look at. Deterministic and
// idempotent: opportunities carry external ids and events fixed uuids, so a re-run adds nothing.
// Texts, statuses and notes come from bin/demo-data.ts; progress goes to stderr, a line per phase.
import { createHash } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { defineCommand } from './command.ts'
import { demoOpportunities, rng, type DemoType } from './demo-data.ts'
import { addDays, localDate, startOfDay } from '../core/time.ts'

/** The tag each demo opportunity gets for its type. */
const DEMO_TAGS: Record<DemoType, string> = {
  potential_user_opportunity: 'lead',
  partnership: 'partner',
  content_idea: 'content',
  community_mention: 'community',
  churn_risk: 'retention',
}

/** How many demo opportunities a project gets. */
export const DEMO_OPPORTUNITIES = 60
/**
 * The first demo opportunity that ends adopted is adopted this many days ago (at 11:00 in the
 * project's zone): with 30 days of events, get_opportunity_impact's 14 days before and 14 after
 * its decision day have all closed, so its page shows a full "After the decision".
 */
export const DEMO_DECISION_DAYS_AGO = 15

const uuidOf = (text: string) => {
  const h = createHash('sha1').update(text).digest('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`
}

export const seedDemo = defineCommand({
  path: ['admin', 'seed-demo'],
  summary: 'Fill a project with realistic opportunities, reviews, memories and 30 days of events.',
  details: ['Safe to run again: what exists already is not added twice.'],
  options: {
    project: { type: 'string', value: 'ID_OR_SLUG', description: 'the project to fill', required: true },
    json: { type: 'boolean', description: 'print the result as one line of JSON' },
  },
  async run(inv) {
    await inv.withApp(async (app) => {
      const candidates = await app.repos.projects.findAnywhere(inv.options.project)
      if (candidates.length !== 1) return inv.fail(candidates.length ? `The slug '${inv.options.project}' is used in several workspaces; pass the project id.` : `No project '${inv.options.project}'.`)
      const project = candidates[0]!
      const owner = await app.repos.projects.firstOwner(project.id)
      if (!owner) return inv.fail(`Project '${project.slug}' has no owner to act as.`)
      const r = await seedProject(app, project, owner.id, (line) => inv.io.stderr.write(`seed-demo: ${line}\n`))
      const result = { project: { id: project.id, slug: project.slug }, ...r }
      inv.print(result, [
        `Seeded ${project.slug}: ${r.opportunities} opportunities (${r.reviewed} reviewed), ${r.memories} memories, ${r.events} events from ${r.distinct_users} users over 30 days.`,
        r.events === 0 && r.opportunities === 0 ? 'Nothing new: the demo data was there already.' : 'Look at it: the console\'s review board and metrics pages, or get_overview.',
      ])
    })
  },
})

/**
 * Fills one project, acting as `ownerId`; `progress` gets a line per phase (and a few within the
 * events), never one per row.
 */
export async function seedProject(
  app: FastifyInstance,
  project: { id: string; slug: string; timezone: string },
  ownerId: string,
  progress: (line: string) => void = () => {}
) {
  const owner = { id: ownerId }
  const now = app.now()

  let opportunities = 0
  let reviewed = 0
  let comments = 0
  const demo = demoOpportunities(project.id, DEMO_OPPORTUNITIES)
  const showcase = demo.find((o) => o.steps.at(-1)?.status === 'adopted')
  const decidedAt = new Date(startOfDay(addDays(localDate(now, project.timezone), -DEMO_DECISION_DAYS_AGO), project.timezone).getTime() + 11 * 3_600_000)
  let showcased: string | undefined
  progress(`opportunities: adding ${demo.length} of ${new Set(demo.map((o) => o.type)).size} types with their reviews`)
  for (const o of demo) {
    // The showcase came in a week before its decision; its last step (adopted) is the decision.
    const receivedAt = o === showcase ? new Date(decidedAt.getTime() - 7 * 86400_000) : new Date(now.getTime() - Math.floor(o.ageDays * 86400_000))
    const { opportunity, created } = await app.repos.opportunities.submit({
      projectId: project.id,
      submittedBy: owner.id,
      contributionType: o.type,
      keyInformation: o.lead.info,
      reason: o.lead.reason,
      suggestedAction: o.lead.action,
      externalId: `seed-demo-${o.index}`,
      receivedAt,
    })
    if (!created) continue
    opportunities++
    // Each step is a review of its own (a line in the history), spread between arrival and now.
    for (const [n, step] of o.steps.entries()) {
      const at = o === showcase
        ? new Date(receivedAt.getTime() + ((decidedAt.getTime() - receivedAt.getTime()) * (n + 1)) / o.steps.length)
        : new Date(receivedAt.getTime() + ((now.getTime() - receivedAt.getTime()) * (n + 1)) / (o.steps.length + 1))
      await app.repos.opportunities.review(project.id, opportunity.event_id, { status: step.status, ...(step.evaluation !== undefined ? { evaluation: step.evaluation } : {}), reviewNote: step.note }, owner.id, at)
    }
    if (o.steps.length) reviewed++
    if (o === showcase) showcased = opportunity.event_id
    // Triage as a team leaves it: a tag per type (and `priority` on some), the owner assigned to
    // what is in progress, and a comment on the first in progress.
    const tags = [DEMO_TAGS[o.type], ...(o.index % 7 === 0 ? ['priority'] : [])]
    await app.repos.tags.tag(project.id, opportunity.event_id, tags, [], owner.id, now)
    const last = o.steps.at(-1)?.status
    if (last === 'reviewing' || last === 'contacted') {
      await app.repos.assignees.assign(project.id, opportunity.event_id, owner.id, owner.id, now)
      if (comments === 0) {
        await app.repos.comments.add({ projectId: project.id, eventId: opportunity.event_id, body: 'I know someone there; let me ask before we reach out cold.', authorUserId: owner.id, now })
        comments++
      }
    }
  }
  progress(`opportunities: ${opportunities} new of ${demo.length} (${reviewed} reviewed, ${demo.reduce((n, o) => n + o.steps.length, 0)} review steps planned)` +
    (showcased ? `; ${showcased} adopted ${DEMO_DECISION_DAYS_AGO} days ago, its impact on its page` : ''))

  let memories = 0
  const existing = await app.repos.memories.list(project.id, { page: 1, pageSize: 1 })
  if (existing.total === 0) {
    for (const [content, tags] of [
      ['Annual plans convert about twice as well when the pricing page shows the monthly equivalent.', ['pricing']],
      ['Our best channel so far is founder-led posts in product-management communities.', ['channels', 'community']],
      ['Enterprise leads always ask for SSO and audit logs first.', ['enterprise', 'sales']],
    ] as const) {
      await app.repos.memories.add({ projectId: project.id, content, tags: [...tags], source: 'seed-demo', createdBy: owner.id, now })
      memories++
    }
  }
  progress(`memories: ${memories} new`)

  const { events: batch, users } = demoEvents(project.id, project.timezone, now)
  let accepted = 0
  const BATCH = 1000
  const batches = Math.ceil(batch.length / BATCH)
  progress(`events: ${batch.length} to record from ${users} users over 30 days, in ${batches} batches`)
  let told = 0
  for (let i = 0; i < batch.length; i += BATCH) {
    accepted += (await app.repos.events.ingest(project.id, batch.slice(i, i + BATCH).map(({ day: _, ...event }) => event), now)).accepted
    // A line at each quarter, not one per batch.
    const percent = Math.floor(((Math.min(i + BATCH, batch.length)) / batch.length) * 4) * 25
    if (percent > told) {
      told = percent
      progress(`events: ${percent}% (${accepted} new so far)`)
    }
  }
  return { opportunities, reviewed, memories, events: accepted, distinct_users: users }
}

/** A demo event, with the project's calendar day it belongs to. */
export interface DemoEvent {
  uuid: string
  event: string
  distinct_id: string
  timestamp: string
  properties: Record<string, unknown>
  day: string
}

/**
 * 30 days of a few hundred users' events, up to `now`: some sign up each day, and the signed-up
 * ones come back now and then. Each event is in the office hours (08:00–20:00) of its day in the
 * project's time zone; today's that are still to come are spread over today's part so far
 * instead, so none is in the future and none lands in another day (at 00:10 they fall between
 * midnight and 00:10, not yesterday evening).
 */
export function demoEvents(projectId: string, timeZone: string, now: Date): { events: DemoEvent[]; users: number } {
  const today = localDate(now, timeZone)
  const random = rng(`${projectId}/events`)
  const again = rng(`${projectId}/events-again`)
  const events: DemoEvent[] = []
  let users = 120
  const at = (day: string, n: number) => {
    const start = startOfDay(day, timeZone).getTime()
    const time = start + (8 + (n % 12)) * 3_600_000 + (n % 60) * 60_000
    if (time <= now.getTime()) return new Date(time).toISOString()
    // Later today than now: at a point of today's part so far (its n-th hundredth, plus half).
    const elapsed = now.getTime() - start
    return new Date(start + Math.floor((elapsed * ((n % 100) + 0.5)) / 100)).toISOString()
  }
  for (let d = 29; d >= 0; d--) {
    const day = addDays(today, -d)
    const signups = 5 + Math.floor(random() * 12)
    for (let s = 0; s < signups; s++, users++) {
      events.push({ uuid: uuidOf(`${projectId}/signup/${users}`), event: 'signup', distinct_id: `user${users}@example.com`, timestamp: at(day, s), properties: { source: random() < 0.5 ? 'organic' : 'newsletter' }, day })
    }
    for (let u = 0; u < users; u++) {
      if (random() > 0.35) continue
      const id = `user${u}@example.com`
      events.push({ uuid: uuidOf(`${projectId}/use/${day}/${u}`), event: 'daily_use', distinct_id: id, timestamp: at(day, u), properties: {}, day })
      // Some come back the same day: daily_use events outnumber daily_use users. Drawn from a
      // generator of their own, so the other draws are those of earlier versions of this seed.
      if (again() < 0.3) events.push({ uuid: uuidOf(`${projectId}/use-again/${day}/${u}`), event: 'daily_use', distinct_id: id, timestamp: at(day, u + 5), properties: {}, day })
      if (random() < 0.5) events.push({ uuid: uuidOf(`${projectId}/view/${day}/${u}`), event: 'page_view', distinct_id: id, timestamp: at(day, u + 1), properties: { path: '/dashboard' }, day })
      if (random() < 0.05) events.push({ uuid: uuidOf(`${projectId}/invite/${day}/${u}`), event: 'invite_sent', distinct_id: id, timestamp: at(day, u + 2), properties: {}, day })
    }
  }
  return { events, users }
}

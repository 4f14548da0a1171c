// `growthdesk admin seed-demo --project P`: realistic opportunities, reviews, memories and
// 30 days of events, so a new deployment has something to look at. Deterministic and
// idempotent: opportunities carry external ids and events fixed uuids, so a re-run adds nothing.
import { createHash } from 'node:crypto'
import { defineCommand } from './command.ts'
import { addDays, localDate } from '../core/time.ts'

const TYPES = ['potential_user_opportunity', 'partnership', 'content_idea', 'community_mention', 'churn_risk'] as const
const LEADS = [
  ['CTO of a 40-person fintech asked about SSO and audit logs on the community forum', 'Matches the enterprise plan we are testing', 'Offer a 30-minute demo and a trial with SSO enabled'],
  ['A newsletter with 12k product managers wants to feature tools for weekly reviews', 'Direct reach to our core audience', 'Send a short pitch and a discount code'],
  ['Three users asked how to export daily metrics to a spreadsheet this week', 'Repeated request, low effort to build', 'Write a how-to and consider a CSV export'],
  ['A design agency mentioned us in a thread about client reporting', 'Agencies manage many projects: multi-project accounts', 'Reach out and ask about their workflow'],
  ['Usage of a 25-seat team dropped 60% after their champion left', 'Risk of churn at renewal next month', 'Contact the new admin and offer onboarding'],
  ['An open-source maintainer wants to integrate with our MCP endpoint', 'Developer reach and credibility', 'Share the SKILL.md and offer help with keys'],
  ['A podcast about indie SaaS invited founders for an episode on growth loops', 'Audience overlaps with early adopters', 'Accept and prepare two customer stories'],
  ['Support tickets mention confusing pricing for annual plans', 'Pricing friction costs conversions', 'Test a simpler annual pricing table'],
] as const

/** A deterministic pseudo-random sequence, so the demo looks the same every time. */
function rng(seed: string) {
  let state = createHash('sha256').update(seed).digest().readUInt32LE(0) || 1
  return () => {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    return (state >>> 0) / 0x100000000
  }
}

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
      const now = app.now()
      const today = localDate(now, project.timezone)

      let opportunities = 0
      for (let i = 0; i < 40; i++) {
        const [info, reason, action] = LEADS[i % LEADS.length]!
        const random = rng(`${project.id}/opportunity/${i}`)
        const receivedAt = new Date(now.getTime() - Math.floor(random() * 30 * 86400_000))
        const { opportunity, created } = await app.repos.opportunities.submit({
          projectId: project.id,
          submittedBy: owner.id,
          contributionType: TYPES[i % TYPES.length]!,
          keyInformation: info,
          reason,
          suggestedAction: action,
          externalId: `seed-demo-${i}`,
          receivedAt,
        })
        if (!created) continue
        opportunities++
        const roll = random()
        if (roll < 0.55) {
          const status = (['reviewing', 'contacted', 'adopted', 'ignored', 'done'] as const)[Math.floor(random() * 5)]!
          const evaluation = status === 'ignored' ? 'not_useful' : random() < 0.7 ? 'useful' : ''
          await app.repos.opportunities.review(project.id, opportunity.event_id, { status, evaluation, reviewNote: status === 'contacted' ? 'Sent an email, waiting for an answer.' : undefined }, owner.id, now)
        }
      }

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

      const random = rng(`${project.id}/events`)
      // A few hundred users: some sign up each day, and the signed-up ones come back now and then.
      const batch: { uuid: string; event: string; distinct_id: string; timestamp: string; properties: Record<string, unknown> }[] = []
      let users = 120
      const at = (day: string, n: number) => new Date(`${day}T${String(8 + (n % 12)).padStart(2, '0')}:${String(n % 60).padStart(2, '0')}:00Z`)
      for (let d = 29; d >= 0; d--) {
        const day = addDays(today, -d)
        const signups = 5 + Math.floor(random() * 12)
        for (let s = 0; s < signups; s++, users++) {
          batch.push({ uuid: uuidOf(`${project.id}/signup/${users}`), event: 'signup', distinct_id: `user${users}@example.com`, timestamp: at(day, s).toISOString(), properties: { source: random() < 0.5 ? 'organic' : 'newsletter' } })
        }
        for (let u = 0; u < users; u++) {
          if (random() > 0.35) continue
          const id = `user${u}@example.com`
          batch.push({ uuid: uuidOf(`${project.id}/use/${day}/${u}`), event: 'daily_use', distinct_id: id, timestamp: at(day, u).toISOString(), properties: {} })
          if (random() < 0.5) batch.push({ uuid: uuidOf(`${project.id}/view/${day}/${u}`), event: 'page_view', distinct_id: id, timestamp: at(day, u + 1).toISOString(), properties: { path: '/dashboard' } })
          if (random() < 0.05) batch.push({ uuid: uuidOf(`${project.id}/invite/${day}/${u}`), event: 'invite_sent', distinct_id: id, timestamp: at(day, u + 2).toISOString(), properties: {} })
        }
      }
      let accepted = 0
      for (let i = 0; i < batch.length; i += 1000) {
        accepted += (await app.repos.events.ingest(project.id, batch.slice(i, i + 1000), now)).accepted
      }
      const result = { project: { id: project.id, slug: project.slug }, opportunities, memories, events: accepted, distinct_users: users }
      inv.print(result, [
        `Seeded ${project.slug}: ${opportunities} opportunities, ${memories} memories, ${accepted} events from ${users} users over 30 days.`,
        accepted === 0 && opportunities === 0 ? 'Nothing new: the demo data was there already.' : 'Look at it: the console\'s review board and metrics pages, or get_overview.',
      ])
    })
  },
})

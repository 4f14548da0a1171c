// The demo opportunities of `admin seed-demo`: for each contribution type its own pool of
// plausible findings (what, why, next step), and a review path per opportunity with a realistic
// spread of statuses, evaluations and notes. Pure and deterministic (a seeded generator), so the
// demo looks the same every time and its texts can be checked against their types.
import { createHash } from 'node:crypto'

export interface Lead {
  readonly info: string
  readonly reason: string
  readonly action: string
}

export const DEMO_POOLS = {
  potential_user_opportunity: [
    { info: 'CTO of a 40-person fintech asked on the community forum whether we support SSO and audit logs', reason: 'Matches the enterprise plan we are testing; SSO is their only blocker', action: 'Offer a 30-minute demo and a trial with SSO switched on' },
    { info: 'A product lead at a travel startup tweeted that they are looking for a lighter alternative to their analytics suite', reason: 'Public buying intent from a team of our target size', action: 'Reply with a short comparison and invite them to a trial' },
    { info: 'Three people from the same agency signed up this week with personal emails', reason: 'Bottom-up adoption inside one company: a team account is likely', action: 'Email them about a shared workspace and the team discount' },
    { info: 'A university lab asked support whether students can use the free tier for a research project', reason: 'Education users become advocates when they graduate', action: 'Send the education plan and ask for a case study later' },
    { info: 'An ops manager at a logistics company requested a quote for 60 seats through the pricing page', reason: 'Inbound request above our average deal size', action: 'Book a discovery call within two days' },
    { info: 'Someone on a Slack community for indie founders asked for tools that track daily active users without cookies', reason: 'Privacy-friendly metrics is our differentiator', action: 'Answer in the thread and link the privacy page' },
    { info: 'A trial account from a 200-person SaaS company invited 12 colleagues in two days', reason: 'Fast internal spread during the trial: high conversion potential', action: 'Offer the account owner an onboarding session' },
    { info: 'A developer asked on GitHub Discussions whether the API can export opportunities to their CRM', reason: 'Integration demand from a company already evaluating us', action: 'Share the REST examples and ask which CRM they use' },
  ],
  partnership: [
    { info: 'A newsletter with 12k product managers wants to feature tools for weekly growth reviews', reason: 'Direct reach to our core audience at a low cost', action: 'Send a short pitch, a screenshot and a discount code' },
    { info: 'An open-source maintainer wants to integrate their CLI with our MCP endpoint', reason: 'Developer reach and credibility with technical buyers', action: 'Share the SKILL.md and offer help with keys' },
    { info: 'A podcast about indie SaaS invited a founder for an episode on growth loops', reason: 'Its audience overlaps with our early adopters', action: 'Accept and prepare two customer stories' },
    { info: 'A CRM vendor proposed a listing in their integrations marketplace', reason: 'Their customers ask for growth reporting we provide', action: 'Check the listing requirements and the revenue share' },
    { info: 'A growth consultancy asked about a referral agreement for their clients', reason: 'Consultants bring several accounts at once', action: 'Draft a referral offer with a 20% first-year commission' },
    { info: 'A startup accelerator offered a perk slot for their next cohort of 30 companies', reason: 'Thirty qualified early-stage teams in one go', action: 'Offer six months free and a workshop for the cohort' },
    { info: 'An analytics blogger wants to co-write a guide on measuring activation', reason: 'Long-lived search traffic on a topic we own', action: 'Agree on an outline and a publication date' },
    { info: 'A no-code platform asked whether we could build an official connector', reason: 'Opens a non-technical audience we do not reach today', action: 'Estimate the effort and ask for their user numbers' },
  ],
  content_idea: [
    { info: 'Three users asked this week how to export daily metrics to a spreadsheet', reason: 'A repeated question that a short guide answers', action: 'Write a how-to and consider a CSV export' },
    { info: 'Our post on stickiness (DAU/MAU) got five times the usual shares', reason: 'The audience wants metric explainers', action: 'Plan a series: activation, retention, churn' },
    { info: 'Support answers the same question about time zones in daily reports twice a week', reason: 'A help article would save support time', action: 'Publish a help article on project time zones' },
    { info: 'Customers describe a weekly triage ritual with the review board in interviews', reason: 'A concrete workflow others can copy', action: 'Write a customer story about weekly triage' },
    { info: 'Search console shows rising queries for "growth opportunity template"', reason: 'Search demand we can capture with a free template', action: 'Publish a downloadable template with a sign-up prompt' },
    { info: 'A webinar on AI agents for growth teams drew 300 registrations for a competitor', reason: 'The topic is hot and we have an MCP endpoint', action: 'Record a demo of an agent triaging opportunities' },
    { info: 'Users often ask what counts as a "daily use" event', reason: 'Confusion about instrumentation slows onboarding', action: 'Add an instrumentation checklist to the docs' },
    { info: 'A founder shared a thread on how they pick one growth channel per quarter', reason: 'Opinionated planning content performs well for us', action: 'Ask them for a guest post' },
  ],
  community_mention: [
    { info: 'A design agency mentioned us in a thread about client reporting tools', reason: 'Agencies run many projects: good fit for multi-project accounts', action: 'Thank them and ask about their workflow' },
    { info: 'A Reddit post comparing growth dashboards lists us as "simple but limited"', reason: 'Perception we can correct with recent features', action: 'Reply with what changed this quarter, without a hard sell' },
    { info: 'A conference talk slide showed our review board as an example of a lightweight pipeline', reason: 'Organic endorsement in front of our audience', action: 'Share the talk and thank the speaker' },
    { info: 'A Hacker News comment praised the idempotent event API', reason: 'Developers value reliability: a message to reuse', action: 'Quote it (with permission) on the developer page' },
    { info: 'A LinkedIn post by a VP of Growth recommended us to early-stage teams', reason: 'A respected voice reaching our buyers', action: 'Comment, then offer them early access to the next feature' },
    { info: 'A Discord server for product analytics added us to its resources channel', reason: 'Steady discovery from an engaged community', action: 'Join and answer questions there twice a week' },
    { info: 'A YouTube review of metrics tools spent two minutes on our setup experience', reason: 'Video reviews shape first impressions', action: 'Send the creator a note on the new onboarding' },
    { info: 'A forum user complained that our docs lack Python examples', reason: 'Public friction for a large developer group', action: 'Add Python examples and answer in the thread' },
  ],
  churn_risk: [
    { info: 'Usage of a 25-seat team dropped 60% after their champion left the company', reason: 'Risk of churn at renewal next month', action: 'Contact the new admin and offer onboarding' },
    { info: 'A customer on the annual plan has not logged in for 21 days', reason: 'Long silence before renewal usually means churn', action: 'Send a check-in with a summary of their last results' },
    { info: 'Support tickets mention confusing pricing for annual plans', reason: 'Pricing friction costs conversions and renewals', action: 'Test a simpler annual pricing table' },
    { info: 'Two accounts downgraded after the price change, both citing the seat minimum', reason: 'The seat minimum is pushing small teams away', action: 'Review the minimum for teams under five' },
    { info: 'A key account reported that events arrived late twice this month', reason: 'Reliability complaints precede churn in larger accounts', action: 'Share the incident notes and the fix with their lead' },
    { info: 'A customer asked how to export all their data', reason: 'Export requests often precede a switch', action: 'Help with the export and ask what is missing' },
    { info: 'Weekly active reviewers in a 10-seat account fell from 8 to 2', reason: 'The review habit is fading', action: 'Offer a 20-minute session on the weekly triage' },
    { info: 'A trial that converted last month has failed payment twice', reason: 'Involuntary churn we can still prevent', action: 'Email the billing contact with the update link' },
  ],
} as const satisfies Record<string, readonly Lead[]>

export type DemoType = keyof typeof DEMO_POOLS
export const DEMO_TYPES = Object.keys(DEMO_POOLS) as DemoType[]

type Status = 'pending' | 'reviewing' | 'contacted' | 'adopted' | 'ignored' | 'done'
type Evaluation = '' | 'useful' | 'not_useful'

/** Notes a reviewer would leave when moving an opportunity to each status. */
export const REVIEW_NOTES: Record<Exclude<Status, 'pending'>, readonly string[]> = {
  reviewing: ['Looking into it this week.', 'Checking the account history first.', 'Asked sales whether they know them.', 'Need numbers before deciding.'],
  contacted: ['Sent an email, waiting for an answer.', 'Call booked for Thursday.', 'Replied in the thread; they asked for pricing.', 'Intro made through a mutual contact.'],
  adopted: ['Agreed: starting next sprint.', 'Signed up for the team plan.', 'Accepted; owner assigned.', 'Went ahead; first results in two weeks.'],
  ignored: ['Not our audience.', 'Too small to matter right now.', 'Duplicate of an earlier finding.', 'Out of scope for this quarter.'],
  done: ['Shipped and announced.', 'Closed: they converted.', 'Published; shared in the newsletter.', 'Resolved with the customer.'],
}

/** The statuses an opportunity passes through on its way to each final status (each a review step). */
const PATHS: Record<Status, readonly Status[]> = {
  pending: [],
  reviewing: ['reviewing'],
  contacted: ['reviewing', 'contacted'],
  adopted: ['reviewing', 'contacted', 'adopted'],
  ignored: ['ignored'],
  done: ['reviewing', 'adopted', 'done'],
}

/** A realistic spread of final statuses: most new work is still pending or in review. */
const STATUS_WEIGHTS: readonly [Status, number][] = [['pending', 34], ['reviewing', 18], ['contacted', 14], ['adopted', 12], ['ignored', 12], ['done', 10]]

export interface DemoStep {
  status: Status
  evaluation?: Evaluation
  note: string
}

export interface DemoOpportunity {
  index: number
  type: DemoType
  lead: Lead
  /** Days before now it came in (fractional). */
  ageDays: number
  steps: DemoStep[]
}

/** A deterministic pseudo-random sequence, so the demo looks the same every time. */
export function rng(seed: string): () => number {
  let state = createHash('sha256').update(seed).digest().readUInt32LE(0) || 1
  return () => {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    return (state >>> 0) / 0x100000000
  }
}

function weighted<T>(random: () => number, choices: readonly [T, number][]): T {
  const total = choices.reduce((sum, [, w]) => sum + w, 0)
  let roll = random() * total
  for (const [value, w] of choices) {
    roll -= w
    if (roll < 0) return value
  }
  return choices.at(-1)![0]
}

/**
 * `count` demo opportunities for a project: types in turn, each type's leads in a shuffled order
 * (so a lead repeats only after its whole pool is used), and a review path to a weighted final status.
 */
export function demoOpportunities(seed: string, count: number): DemoOpportunity[] {
  const order = new Map(DEMO_TYPES.map((type) => {
    const random = rng(`${seed}/order/${type}`)
    const indexes = DEMO_POOLS[type].map((_, i) => i)
    for (let i = indexes.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1))
      ;[indexes[i], indexes[j]] = [indexes[j]!, indexes[i]!]
    }
    return [type, indexes]
  }))
  const out: DemoOpportunity[] = []
  for (let i = 0; i < count; i++) {
    const type = DEMO_TYPES[i % DEMO_TYPES.length]!
    const round = Math.floor(i / DEMO_TYPES.length)
    const indexes = order.get(type)!
    const lead = DEMO_POOLS[type][indexes[round % indexes.length]!]!
    const random = rng(`${seed}/opportunity/${i}`)
    const final = weighted(random, STATUS_WEIGHTS)
    const steps = PATHS[final].map((status, n, path): DemoStep => {
      const notes = REVIEW_NOTES[status as Exclude<Status, 'pending'>]
      const last = n === path.length - 1
      // The evaluation is set once the reviewer has an opinion: at the end of the path.
      const evaluation: Evaluation | undefined = !last
        ? undefined
        : status === 'ignored'
          ? 'not_useful'
          : status === 'adopted' || status === 'done'
            ? 'useful'
            : random() < 0.55 ? 'useful' : random() < 0.3 ? 'not_useful' : ''
      return { status, ...(evaluation !== undefined ? { evaluation } : {}), note: notes[Math.floor(random() * notes.length)]! }
    })
    out.push({ index: i, type, lead, ageDays: random() * 30, steps })
  }
  return out
}

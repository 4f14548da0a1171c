// The digest scheduler: every minute, the projects whose digest is due (its hour has come in
// the project's zone, on its weekday if weekly, and that period is not sent yet) get one
// `digest.ready` message through the webhook outbox, claimed by a conditional UPDATE in the
// transaction that queues it (one message per period, whatever the number of instances), and a
// mail to the owners when a mailer is configured, sent after the commit. Started with the app
// when the configuration turns it on (DIGESTS_ENABLED), stopped on close; tests drive it with
// `app.digests.sendDue()` on the app's clock.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { runPeriodically } from './periodic.ts'
import { buildDigest, digestMail, latestSlot, slotPeriod } from '../core/digests.ts'
import type { DigestCandidate } from '../db/repositories/digests.ts'

declare module 'fastify' {
  interface FastifyInstance {
    digests: DigestScheduler
  }
}

export interface DigestScheduler {
  /** Sends the digests due now; resolves with how many this call queued (mails sent or given up). */
  sendDue(): Promise<number>
}

export interface DigestsPluginOptions {
  /** Run on a timer (DIGESTS_ENABLED); off: nothing is sent unless sendDue is called. */
  enabled: boolean
  publicUrl: string
  intervalMs?: number
}

const INTERVAL_MS = 60_000

async function digestsPlugin(app: FastifyInstance, options: DigestsPluginOptions) {
  /** Mails the digest to the project's owners, each their own message; a failure is logged, the digest stays sent. */
  async function mail(project: DigestCandidate, data: Parameters<typeof digestMail>[0]) {
    if (!app.mail.enabled) return
    const { subject, text } = digestMail(data, options.publicUrl)
    const owners = await app.repos.digests.ownerEmails(project.projectId)
    await Promise.all(owners.map((to) => app.mail.send({ to, subject, text }).catch((err) => {
      app.log.warn({ err, project: project.projectId, period: data.period }, 'digest mail could not be sent')
    })))
  }

  /** One project: its digest if due; true when this call queued it. */
  async function sendIfDue(project: DigestCandidate, now: Date): Promise<boolean> {
    const period = slotPeriod(project.frequency, latestSlot(project, now, project.timezone))
    if (project.lastPeriodEnd !== null && project.lastPeriodEnd >= period.to) return false
    const data = await buildDigest(app.repos, { id: project.projectId, slug: project.slug, name: project.name, timezone: project.timezone }, project.frequency, period, now)
    if (!(await app.repos.digests.claim(project.projectId, period.to, now, data))) return false
    app.log.info({ project: project.projectId, frequency: project.frequency, period: { from: period.from, to: period.to } }, 'digest queued')
    await mail(project, data).catch((err) => app.log.warn({ err, project: project.projectId }, 'digest mail could not be sent'))
    return true
  }

  async function sendDue(): Promise<number> {
    const now = app.now()
    // A due period ends on a project's yesterday, never after today's UTC date.
    const candidates = await app.repos.digests.candidates(now.toISOString().slice(0, 10))
    let sent = 0
    for (const project of candidates) {
      try {
        if (await sendIfDue(project, now)) sent++
      } catch (err) {
        // One project's failure leaves the others' digests going; it is tried again next tick.
        app.log.error({ err, project: project.projectId }, 'digest could not be sent')
      }
    }
    return sent
  }

  app.decorate('digests', { sendDue })
  if (!options.enabled) return

  runPeriodically(app, { what: 'digest scheduler', intervalMs: options.intervalMs ?? INTERVAL_MS, work: sendDue })
}

export default fp(digestsPlugin, { name: 'digests', dependencies: ['repositories', 'mail', 'registry'] })

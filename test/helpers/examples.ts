// The operations' own examples as the suites use them (catalogue, calls, eras, fuzz): every
// operation of the registry, tools and the others, read from the app, so that a new operation —
// in this repository or from a plugin — is tested by the same suites with no table to edit.
//
// An example names records by id (opp_…, mem_…, whk_…, msg_…, key_…, inv_…, view_…, alr_…) and members by an
// email that a fresh database does not have, and webhook URLs on the internet.
// A `World` makes them real in one workspace: each id or member email an example names is
// replaced by a record made for it the first time (the same record every time after), and an
// https webhook URL by a loopback one (the suites allow private networks),
// so that a valid example is answered with a result, and an invalid one is refused for its own
// fault, not for a record that is missing.
import type { FastifyInstance } from 'fastify'
import type { BootstrapResult } from '../../bin/admin.ts'
import { operatorPrincipal } from '../../core/access.ts'
import { errorResponse, type ErrorBody } from '../../core/errors.ts'
import type { Operation } from '../../core/operations.ts'

/** Every operation of the registry, tools and the others, in registration order. */
export function allOperations(app: FastifyInstance): Operation[] {
  return app.registry.operations()
}

/** The arguments a surface sends for an example: a project operation's with `project` (an example leaves it out). */
export function callArgs(op: Operation, args: Record<string, unknown>, project: string): Record<string, unknown> {
  return op.scope === 'project' ? { project, ...args } : { ...args }
}

/** What is wrong with an answer to an invalid example, or null: it must be invalid_arguments, every detail naming `field`. */
export function invalidAnswerProblem(status: number, body: string, field: string): string | null {
  let parsed: ErrorBody | undefined
  try {
    parsed = JSON.parse(body) as ErrorBody
  } catch {
    return `not JSON: ${status} ${body.slice(0, 300)}`
  }
  const error = parsed?.error
  if (status !== 400 || error?.code !== 'invalid_arguments') return `not a 400 invalid_arguments: ${status} ${body.slice(0, 300)}`
  const paths = (error.details ?? []).map((d) => d.path)
  if (paths.length === 0 || paths.some((p) => p !== field)) return `the details name ${JSON.stringify(paths)}, not ${JSON.stringify(field)}: ${body.slice(0, 300)}`
  return null
}

/** Is this answer a refusal of the arguments as such (never the answer to a valid example)? */
export const isInvalidArguments = (status: number, body: string) => status === 400 && body.includes('"code":"invalid_arguments"')

const ID = /^(opp|mem|whk|msg|key|inv|cmt|view|alr)_[0-9A-Za-z]{1,40}$/

/** The records of one workspace that examples name, made as they are first named. */
export class World {
  readonly app: FastifyInstance
  readonly ws: BootstrapResult
  private readonly made = new Map<string, string>()

  constructor(app: FastifyInstance, ws: BootstrapResult) {
    this.app = app
    this.ws = ws
  }

  /**
   * The example's arguments for this workspace: each id replaced by its record's, a workspace
   * operation's `project` by this workspace's project, an https webhook `url` by a loopback
   * address (user name, password and path kept). Invalid examples too: their fault stays.
   */
  async realize(op: Operation, args: Record<string, unknown>): Promise<Record<string, unknown>> {
    const out = structuredClone(args)
    if (op.scope === 'workspace' && typeof out.project === 'string') out.project = this.ws.project.id
    if (typeof out.from_project === 'string' && out.from_project !== '') out.from_project = this.ws.project.id
    // A list of projects with roles (an invitation's) names this workspace's project too.
    if (op.scope === 'workspace' && Array.isArray(out.projects)) {
      out.projects = out.projects.map((p: unknown) => (p && typeof p === 'object' && typeof (p as { project?: unknown }).project === 'string' ? { ...p, project: this.ws.project.id } : p))
    }
    // An email names a member of this workspace, made the first time it is named (emails are
    // unique in the deployment: each workspace's member has its own address) — except in an
    // invitation, which names someone who is not a member yet.
    if (typeof out.email === 'string' && /^[^@\s]+@[^@\s]+$/.test(out.email) && op.name !== 'invite_member') out.email = await this.member(out.email)
    // An assignee named by email is such a member too.
    if (typeof out.assignee === 'string' && /^[^@\s]+@[^@\s]+$/.test(out.assignee)) out.assignee = await this.member(out.assignee)
    if (typeof out.url === 'string' && out.url.startsWith('https://')) {
      const url = new URL(out.url)
      out.url = `http://${url.username ? `${url.username}:${url.password}@` : ''}127.0.0.1:9${url.pathname}${url.search}`
    }
    // Webhooks (and the rest) first: a message is made for the webhook its call names.
    const replace = async (value: unknown, messages: boolean): Promise<unknown> => {
      if (typeof value === 'string' && ID.test(value) && value.startsWith('msg_') === messages) return this.record(value, out.id, out.event_id)
      // One at a time: an id named twice is one record, made once.
      if (value && typeof value === 'object') {
        for (const [k, v] of Object.entries(value)) (value as Record<string, unknown>)[k] = await replace(v, messages)
      }
      return value
    }
    await replace(out, false)
    await replace(out, true)
    // An impact is read from a decision: the opportunity it names was adopted 15 days ago.
    if (op.name === 'get_opportunity_impact' && typeof out.event_id === 'string') await this.adopted(out.event_id)
    return out
  }

  private async adopted(eventId: string): Promise<void> {
    const key = `adopted ${eventId}`
    if (this.made.has(key)) return
    const { app, ws } = this
    await app.repos.opportunities.review(ws.project.id, eventId, { status: 'adopted' }, ws.user.id, new Date(app.now().getTime() - 15 * 86_400_000))
    this.made.set(key, eventId)
  }

  private async record(literal: string, webhook: unknown, opportunity?: unknown): Promise<string> {
    // A message belongs to a webhook: the same msg_… with another webhook is another message.
    const key = literal.startsWith('msg_') ? `${literal} of ${String(webhook)}` : literal
    const known = this.made.get(key)
    if (known) return known
    const { app, ws } = this
    const now = app.now()
    const base = { projectId: ws.project.id, createdBy: ws.user.id, now }
    let id: string
    switch (literal.slice(0, 3)) {
      case 'opp':
        id = (await app.repos.opportunities.submit({ projectId: ws.project.id, submittedBy: ws.user.id, contributionType: 'potential_user_opportunity', keyInformation: `Named by an example as ${literal}`, reason: 'An example names it', suggestedAction: 'Follow it up', receivedAt: now })).opportunity.event_id
        break
      case 'mem':
        id = (await app.repos.memories.add({ ...base, content: `Named by an example as ${literal}`, tags: ['example'], source: 'test' })).id
        break
      case 'whk':
        id = (await this.webhook()).id
        break
      case 'msg': {
        const hook = typeof webhook === 'string' && webhook.startsWith('whk_') ? webhook : (await this.webhook()).id
        id = (await app.repos.webhooks.enqueueOne(hook, 'webhook.test', {}, now)).id
        break
      }
      case 'cmt': {
        // A comment by the owner on the opportunity the call names (a reply's parent), or on one of its own.
        const eventId = typeof opportunity === 'string' && opportunity.startsWith('opp_') ? opportunity : await this.record(`opp_for_${literal}`, undefined)
        const made = await app.repos.comments.add({ projectId: ws.project.id, eventId, body: `Named by an example as ${literal}`, authorUserId: ws.user.id, now })
        if (made.kind !== 'added') throw new Error(`could not make a comment: ${made.kind}`)
        id = made.comment.comment_id
        break
      }
      case 'inv': {
        const made = await app.repos.members.invite({ workspaceId: ws.workspace.id, email: `invited-${this.made.size}@example.com`, invitedBy: ws.user.id, projects: [{ projectId: ws.project.id, role: 'viewer' }], tokenHash: `example-${literal}-${ws.workspace.id}`, now, expiresAt: new Date(now.getTime() + 7 * 86_400_000) })
        if (!made.ok) throw new Error('could not make an invitation')
        id = made.invitation.id
        break
      }
      case 'alr': {
        const alert = await app.repos.alerts.create({ projectId: ws.project.id, name: `Named by an example as ${literal}`, metric: 'daily_users', event: null, condition: 'below', threshold: 10, createdBy: ws.user.id, now }, 1000)
        id = alert!.id
        break
      }
      case 'vie':
        id = (await app.repos.savedViews.save({ projectId: ws.project.id, userId: ws.user.id, name: `Named by an example as ${literal}`, filters: { status: 'pending' }, shared: false, now })).view.view_id
        break
      default:
        id = (await app.repos.apiKeys.create({ workspaceId: ws.workspace.id, userId: ws.user.id, kind: 'service', name: `named by an example as ${literal}` })).row.id
    }
    this.made.set(key, id)
    return id
  }

  private async member(email: string): Promise<string> {
    const key = `member ${email}`
    const known = this.made.get(key)
    if (known) return known
    const [local, domain] = email.split('@') as [string, string]
    const address = `${local}+${this.ws.workspace.id}@${domain}`.toLowerCase()
    const { app, ws } = this
    const user = await app.repos.users.create({ workspaceId: ws.workspace.id, email: address, passwordHash: 'scrypt$1024$8$1$x$y' })
    await app.repos.users.setMembership({ userId: user.id, projectId: ws.project.id, role: 'reviewer' })
    this.made.set(key, address)
    return address
  }

  private webhook() {
    const { app, ws } = this
    return app.repos.webhooks.create({ workspaceId: ws.workspace.id, projectId: ws.project.id, url: 'http://127.0.0.1:9/hook', events: ['memory.added'], description: 'named by an example', secret: 'whsec_c2VjcmV0', createdBy: ws.user.id, now: app.now() })
  }

  /**
   * An operation called as the workspace owner through the registry, the way the console and
   * the CLI reach the operations that are not tools: the status and body a client would see.
   */
  async invoke(op: Operation, args: Record<string, unknown>): Promise<{ status: number; body: string }> {
    const { app, ws } = this
    try {
      const result = await app.registry.invoke(op, args, {
        principal: operatorPrincipal({ id: ws.user.id, email: ws.user.email, workspaceId: ws.workspace.id }),
        projectRef: op.scope === 'project' ? ws.project.id : undefined,
        surface: 'cli',
        log: app.log,
      })
      return { status: 200, body: JSON.stringify({ result }) }
    } catch (err) {
      const { status, body, internal } = errorResponse(err)
      if (internal) throw err
      return { status, body: JSON.stringify(body) }
    }
  }
}

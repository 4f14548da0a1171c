// The review board of a project: a Board view (a column per status, each with its total and
// its first cards, compact, each a link to the opportunity's page) or a List view (full review
// forms) with the same filters and a text search; reviewing several opportunities at once or
// one; one opportunity's page (everything it says, its review form, its history) and its
// review history alone. Keyboard triage and drag and drop are console.js, over these forms.
import type { FastifyInstance } from 'fastify'
import type { Static } from '@sinclair/typebox'
import { statuses } from '../../schemas/opportunities.ts'
import listOpportunities from '../../tools/list-opportunities.ts'
import reviewOpportunity from '../../tools/review-opportunity.ts'
import reviewOpportunities from '../../tools/review-opportunities.ts'
import getReviewHistory from '../../tools/get-review-history.ts'
import getOpportunity from '../../tools/get-opportunity.ts'
import { commentsFor } from './comments.ts'
import { savedViewsFor } from './saved-views.ts'
import { boardChoices, triageFor } from './triage.ts'
import { impactFor } from './impact.ts'
import { appError } from '../../core/errors.ts'
import { asVersion, describe, flash, formPost, projectAccess, run, safeNext, type Form } from './actions.ts'

export function boardPages(app: FastifyInstance) {
  const form = formPost(app)

  app.get<{ Params: { project: string } }>('/console/projects/:project/opportunities', async (request, reply) => {
    const query = request.query as Form
    const view = query.view === 'list' ? 'list' : 'board'
    const filters = {
      type: query.type || 'all',
      date: query.date || 'all',
      evaluation: query.evaluation || 'all',
      status: query.status || 'all',
      // A tag, and who it is given to (a member's id or email, `me`, `none`); '' is anyone's.
      tag: query.tag ?? '',
      assignee: query.assignee ?? '',
      page: Number(query.page ?? 1),
      page_size: Number(query.page_size ?? 20),
    }
    const q = query.q?.trim() ?? ''
    const { tag, assignee, ...rest } = filters
    const args = { ...rest, ...(q ? { q } : {}), ...(tag !== '' ? { tag } : {}), ...(assignee !== '' ? { assignee } : {}) }
    const project = await projectAccess(request, request.params.project)
    let page
    let columns: { status: string; total: number; items: Static<(typeof listOpportunities)['output']>['items'] }[] = []
    try {
      if (view === 'list') page = await run(request, listOpportunities, args, request.params.project)
      else {
        // One listing per status with the other filters: each column's count is the API's total.
        const shown = filters.status === 'all' ? statuses : statuses.filter((s) => s === filters.status)
        if (shown.length === 0) await run(request, listOpportunities, args, request.params.project) // the bad status, as a 400
        columns = await Promise.all(
          shown.map(async (status) => {
            const { items, total } = await run(request, listOpportunities, { ...args, status, page: 1 }, request.params.project)
            return { status, total, items }
          })
        )
      }
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 400) {
        reply.code(400)
        return reply.page('error', { title: 'Bad filter', heading: 'Those filters do not work', message: describe(err) })
      }
      throw err
    }
    const types = await app.repos.opportunities.types(project!.id)
    // A type filter that names no type of the project is still offered, so the choice shows it.
    if (filters.type !== 'all' && !types.includes(filters.type)) types.push(filters.type)
    const choices = await boardChoices(request, request.params.project)
    if (tag !== '' && !choices.tags.some((t) => t.toLowerCase() === tag.trim().toLowerCase())) choices.tags.push(tag)
    const member = choices.members.find((m) => m.id === assignee || m.email.toLowerCase() === assignee.trim().toLowerCase())
    // On a phone the board shows one column at a time: the one named by `col` (links switch it),
    // else the first with cards in it.
    const col = columns.find((c) => c.status === query.col)?.status ?? columns.find((c) => c.items.length > 0)?.status ?? columns[0]?.status
    const state = { ...Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== '').map(([k, v]) => [k, String(v)])), ...(q ? { q } : {}), view, ...(query.col && col === query.col ? { col } : {}) }
    const link = (change: Record<string, string>) => `?${new URLSearchParams({ ...state, ...change }).toString()}`
    return reply.page('board', {
      title: `Review board · ${project!.name}`,
      project,
      filters,
      q,
      view,
      types,
      statuses,
      tags: choices.tags,
      members: choices.members,
      // The assignee filter as its choice names it: a member's id, `me`, `none`, or as sent.
      assigneeChoice: member ? member.id : assignee,
      savedViews: await savedViewsFor(request, request.params.project, { ...filters, ...(q ? { q } : {}) }),
      page,
      columns,
      col,
      back: request.url,
      // A card's link: the opportunity's page, which leads back to this board as it is.
      detailUrl: (id: string) => `${detailPath(project!.slug, id)}?${new URLSearchParams({ back: request.url }).toString()}`,
      link,
      pageUrl: (p: number) => link({ page: String(p) }),
      // The same filters, every page: the whole listing as CSV.
      csvUrl: `/console/projects/${encodeURIComponent(project!.slug)}/opportunities.csv?${new URLSearchParams({
        type: filters.type, date: filters.date, evaluation: filters.evaluation, status: filters.status, ...(q ? { q } : {}), ...(tag !== '' ? { tag } : {}), ...(assignee !== '' ? { assignee } : {}),
      }).toString()}`,
    })
  })

  // Several opportunities at once: one review_opportunities call, all or nothing; each card
  // carries the version it was shown at, so a card someone else changed since stops them all.
  app.post<{ Params: { project: string } }>('/console/projects/:project/opportunities/bulk-review', form, async (request, reply) => {
    const body = request.body as Record<string, string | string[] | undefined>
    const back = safeNext(typeof body.back === 'string' ? body.back : undefined, `/console/projects/${encodeURIComponent(request.params.project)}/opportunities`)
    const ids = [body.event_ids ?? []].flat().filter((id) => id !== '')
    const args: Record<string, unknown> = { event_ids: [...new Set(ids)] }
    // "keep" (or nothing) leaves a field alone; "none" clears the evaluation.
    if (typeof body.status === 'string' && body.status !== '' && body.status !== 'keep') args.status = body.status
    if (typeof body.evaluation === 'string' && body.evaluation !== '' && body.evaluation !== 'keep') args.evaluation = body.evaluation === 'none' ? '' : body.evaluation
    const versions = (args.event_ids as string[]).map((id) => body[`version_${id}`])
    if (versions.length > 0 && versions.every((v) => typeof v === 'string' && v !== '')) args.if_versions = versions.map((v) => asVersion(v as string))
    if (ids.length === 0) flash(request, 'error', 'Select at least one opportunity first.')
    else if (args.status === undefined && args.evaluation === undefined) flash(request, 'error', 'Choose a status or an evaluation to apply.')
    else {
      try {
        const { items } = await run(request, reviewOpportunities, args, request.params.project)
        flash(request, 'ok', `${items.length} ${items.length === 1 ? 'opportunity' : 'opportunities'} changed.`)
      } catch (err) {
        const status = (err as { statusCode?: number }).statusCode
        if (status === 409) flash(request, 'error', `Nothing changed: ${describe(err)} — changed by someone else since you opened the page; the board below shows them as they are now.`)
        else if (status !== 400 && status !== 404) throw err
        else flash(request, 'error', `Nothing changed: ${describe(err)}`)
      }
    }
    return reply.redirect(back, 303)
  })

  app.post<{ Params: { project: string; id: string } }>('/console/projects/:project/opportunities/:id/review', form, async (request, reply) => {
    const body = request.body as Form
    // The form carries every field; send only the ones the reviewer changed, as an API client would.
    const args: Record<string, unknown> = { event_id: request.params.id }
    // Browsers submit every newline of a form (the textarea and the hidden orig_note alike) as CRLF.
    const lf = (v: string | undefined) => v?.replace(/\r\n/g, '\n')
    for (const field of ['evaluation', 'status', 'note'] as const) {
      const value = field === 'note' ? lf(body.note) : body[field]
      const orig = field === 'note' ? lf(body.orig_note) : body[`orig_${field}`]
      if (value !== undefined && value !== orig) args[field] = value
    }
    // Only if no one changed it since the page was rendered (its version then).
    const changes = Object.keys(args).length - 1
    if (typeof body.version === 'string' && body.version !== '') args.if_version = asVersion(body.version)
    try {
      if (changes === 0) flash(request, 'ok', 'Nothing changed.')
      else {
        await run(request, reviewOpportunity, args, request.params.project)
        flash(request, 'ok', 'Review saved.')
      }
    } catch (err) {
      const e = err as { statusCode?: number; version?: number }
      if (e.statusCode === 409 && typeof e.version === 'number') {
        flash(request, 'error', `Not saved: this opportunity was changed by someone else since you opened the page (it is now at version ${e.version}). It is shown below as it is now; reload if it is not, then review it again.`)
      } else if (e.statusCode !== 400) throw err
      else flash(request, 'error', `Not saved: ${describe(err)}`)
    }
    const back = safeNext(body.back, `/console/projects/${encodeURIComponent(request.params.project)}/opportunities`)
    return reply.redirect(`${back}#${encodeURIComponent(request.params.id)}`)
  })

  app.get<{ Params: { project: string; id: string } }>('/console/projects/:project/opportunities/:id/history', async (request, reply) => {
    const history = await run(request, getReviewHistory, { event_id: request.params.id }, request.params.project)
    const project = await projectAccess(request, request.params.project)
    return reply.page('history', { title: 'Review history', project, history, detailUrl: detailPath(project!.slug, request.params.id) })
  })

  // One opportunity: everything it says, its review form and its history. get_review_history is
  // the access check (review access; an id of another project or none is a 404) and the history.
  app.get<{ Params: { project: string; id: string } }>('/console/projects/:project/opportunities/:id', async (request, reply) => {
    const { id } = request.params
    let history
    try {
      history = await run(request, getReviewHistory, { event_id: id }, request.params.project)
    } catch (err) {
      // Not an opportunity id at all (`bulk-review`, `x`): there is nothing at this address.
      if ((err as { statusCode?: number }).statusCode === 400) throw appError('NotFound', 'There is no opportunity at this address.')
      throw err
    }
    const project = (await projectAccess(request, request.params.project))!
    const opportunity = await run(request, getOpportunity, { event_id: id }, request.params.project)
    const query = request.query as Form
    const board = `/console/projects/${encodeURIComponent(project.slug)}/opportunities`
    const back = safeNext(query.back, board)
    return reply.page('opportunity', {
      title: `${opportunity.contribution_type} · ${project.name}`,
      project,
      o: opportunity,
      history,
      statuses,
      // The board it was opened from (with its filters), and this page, where its review form returns.
      boardUrl: back.startsWith(board) ? back : board,
      self: request.url,
      // Issue 28's sections: similar ones (with Merge into this), merged reports, tags, assignee, comments.
      ...(await triageFor(request, request.params.project, opportunity)),
      tags: opportunity.tags,
      assignee: opportunity.assignee,
      comments: await commentsFor(request, request.params.project, id),
      // An adopted or done one's "After the decision" panel (null for any other).
      impact: await impactFor(request, request.params.project, opportunity),
    })
  })
}

/** The console address of one opportunity. */
export function detailPath(slug: string, id: string) {
  return `/console/projects/${encodeURIComponent(slug)}/opportunities/${encodeURIComponent(id)}`
}

// Triage of one opportunity in the console (issue 28): merging a similar one into it, unmerging,
// tagging and assigning. Each form is a plain CSRF form on the opportunity's page (console.js
// posts the same forms in place from the board's panel, and `a` assigns a card): it runs its
// operation as the signed-in user and comes back (`back`, a local console address) with a flash
// message. `triageFor` reads what the page shows (similar ones, merged reports, the project's
// tags and members); `boardChoices` the board's tag and assignee choices.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import findSimilarOpportunities from '../../tools/find-similar-opportunities.ts'
import mergeOpportunities from '../../tools/merge-opportunities.ts'
import unmergeOpportunity from '../../tools/unmerge-opportunity.ts'
import listMergedOpportunities from '../../tools/list-merged-opportunities.ts'
import tagOpportunity from '../../tools/tag-opportunity.ts'
import listTags from '../../tools/list-tags.ts'
import assignOpportunity from '../../tools/assign-opportunity.ts'
import listMembers from '../../tools/list-members.ts'
import getOpportunity from '../../tools/get-opportunity.ts'
import type { Opportunity } from '../../schemas/opportunities.ts'
import { asVersion, describe, flash, formPost, projectAccess, run, safeNext } from './actions.ts'

/** A member of the project as the assignee choices show one. */
export interface MemberChoice { id: string; email: string; you: boolean }

/** The project's tags (names, in name order) and members (by email): the board's filters and a page's choices. */
export async function boardChoices(request: FastifyRequest, project: string): Promise<{ tags: string[]; members: MemberChoice[] }> {
  const access = await projectAccess(request, project)
  const [tags, members] = await Promise.all([
    run(request, listTags, {}, project).then((r) => r.items.map((t) => t.name)).catch(refusedAs<string[]>([])),
    // list_members answers everyone the caller shares a project with: those of this project are its members.
    run(request, listMembers, {}).then((r) => r.members
      .filter((m) => m.projects.some((p) => p.id === access?.id))
      .map((m) => ({ id: m.id, email: m.email, you: m.you }))
      .sort((a, b) => a.email.localeCompare(b.email))),
  ])
  return { tags, members }
}

/** A read the caller may not make (a viewer's list_tags) answers `fallback`; anything else is thrown. */
function refusedAs<T>(fallback: T) {
  return (err: unknown): T => {
    if ((err as { statusCode?: number }).statusCode === 403) return fallback
    throw err
  }
}

/**
 * What the opportunity's page shows besides the opportunity: up to 5 similar ones (none for a
 * merged one: it is no target), the reports merged into it (when it has any), and the choices
 * of its tag and assignee forms.
 */
export async function triageFor(request: FastifyRequest, project: string, o: Opportunity) {
  const [similar, merged, mergedInto, choices] = await Promise.all([
    o.merged_into ? Promise.resolve([]) : run(request, findSimilarOpportunities, { event_id: o.event_id, limit: 5 }, project).then((r) => r.items),
    o.report_count > 1 ? run(request, listMergedOpportunities, { event_id: o.event_id }, project).then((r) => r.items) : Promise.resolve([]),
    // The one it is merged into, for the banner (its text; its id alone if it cannot be read).
    o.merged_into ? run(request, getOpportunity, { event_id: o.merged_into }, project).catch(() => null) : Promise.resolve(null),
    boardChoices(request, project),
  ])
  return { similar, merged, mergedInto, tagChoices: choices.tags, members: choices.members }
}

export function triagePages(app: FastifyInstance) {
  const form = formPost(app)
  type Params = { Params: { project: string; id: string } }

  /**
   * Runs one triage form's operation and says how it went: a refusal of the input (400), of the
   * state (409: changed by someone else, or merged) or, for a merge, of a source (404) is a
   * flash message on the page it comes back to; no access (403) or no such opportunity is an error page.
   */
  async function act(request: FastifyRequest, call: () => Promise<string>, also: number[] = []) {
    try {
      flash(request, 'ok', await call())
    } catch (err) {
      const e = err as { statusCode?: number; version?: number }
      if (e.statusCode === 409 && typeof e.version === 'number') {
        flash(request, 'error', `Not saved: this opportunity was changed by someone else since you opened the page (it is now at version ${e.version}). It is shown below as it is now; reload if it is not, then try again.`)
      } else if (e.statusCode === 400 || e.statusCode === 409 || also.includes(e.statusCode ?? 0)) {
        flash(request, 'error', `Not saved: ${describe(err)}`)
      } else throw err
    }
  }
  /** A field of the form as text ('' when missing, or sent more than once). */
  const field = (request: FastifyRequest, name: string) => {
    const value = (request.body as Record<string, unknown> | undefined)?.[name]
    return typeof value === 'string' ? value : ''
  }
  /** Where the form comes back to: `back`, else the opportunity's page. */
  const backOf = (request: FastifyRequest<Params>, anchor = '') => {
    const page = `/console/projects/${encodeURIComponent(request.params.project)}/opportunities/${encodeURIComponent(request.params.id)}`
    return `${safeNext(field(request, 'back') || undefined, page)}${anchor}`
  }
  /** The version the page showed, as the precondition of the change. */
  const versionOf = (request: FastifyRequest) => {
    const version = field(request, 'version')
    return version !== '' ? { if_version: asVersion(version) } : {}
  }
  const short = (text: string) => (text.length > 70 ? `${text.slice(0, 67).trimEnd()}…` : text)

  // "Merge into this": the one sent (`source_id`) becomes a report of this page's opportunity.
  app.post<Params>('/console/projects/:project/opportunities/:id/merge', form, async (request, reply) => {
    const source = field(request, 'source_id')
    await act(request, async () => {
      const target = await run(request, mergeOpportunities, { event_id: request.params.id, source_ids: [source], ...versionOf(request) }, request.params.project)
      const merged = target.sources[0]
      return `Merged: “${short(merged?.key_information ?? source)}” is now one of the ${target.report_count} reports of this opportunity.`
    }, [404])
    return reply.redirect(backOf(request, '#merged'), 303)
  })

  // Takes a merged opportunity back out of the one it is merged into.
  app.post<Params>('/console/projects/:project/opportunities/:id/unmerge', form, async (request, reply) => {
    await act(request, async () => {
      const result = await run(request, unmergeOpportunity, { event_id: request.params.id }, request.params.project)
      return `Unmerged: “${short(result.key_information)}” is listed on its own again.`
    })
    return reply.redirect(backOf(request), 303)
  })

  // Adds one tag (`add`, made on first use) or takes one off (`remove`).
  app.post<Params>('/console/projects/:project/opportunities/:id/tags', form, async (request, reply) => {
    const add = field(request, 'add').trim()
    const remove = field(request, 'remove')
    if (add === '' && remove === '') flash(request, 'error', 'Type a tag to add first.')
    else if ([...add].length > 40) flash(request, 'error', `Not saved: a tag is at most 40 characters (this one has ${[...add].length}).`)
    else {
      await act(request, async () => {
        const args = { event_id: request.params.id, ...(add !== '' ? { add: [add] } : { remove: [remove] }), ...versionOf(request) }
        const result = await run(request, tagOpportunity, args, request.params.project)
        if (add === '') return `Tag “${remove}” removed.`
        const name = result.tags.find((t) => t.toLowerCase() === add.toLowerCase()) ?? add
        return `Tagged “${name}”.`
      })
    }
    return reply.redirect(backOf(request, '#tags'), 303)
  })

  // Gives it to a member (`assignee`: a user id, an email or `me`; empty: nobody); the
  // "Assign to me" button sends `me=1`.
  app.post<Params>('/console/projects/:project/opportunities/:id/assign', form, async (request, reply) => {
    const assignee = field(request, 'me') !== '' ? 'me' : field(request, 'assignee').trim() || null
    await act(request, async () => {
      const result = await run(request, assignOpportunity, { event_id: request.params.id, assignee, ...versionOf(request) }, request.params.project)
      return result.assignee ? `Assigned to ${result.assignee.email}.` : 'Assigned to nobody.'
    })
    return reply.redirect(backOf(request, '#assignee'), 303)
  })
}

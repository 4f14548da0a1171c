// Comments on an opportunity in the console: the forms of views/comments.eta (comment, reply,
// edit, delete), each one operation run as the signed-in user, then back to the page it came
// from; and a page of one opportunity's thread. A page that shows an opportunity (the board's
// detail) includes the thread with `commentsFor` and include('comments', …).
import type { FastifyInstance, FastifyRequest } from 'fastify'
import listComments from '../../tools/list-comments.ts'
import addComment from '../../tools/add-comment.ts'
import editComment from '../../tools/edit-comment.ts'
import deleteComment from '../../tools/delete-comment.ts'
import { describe, flash, formPost, projectAccess, run, safeNext, type Form } from './actions.ts'

/** An opportunity's thread as views/comments.eta takes it (`it.comments`): list_comments' result. */
export function commentsFor(request: FastifyRequest, project: string, eventId: string) {
  return run(request, listComments, { event_id: eventId }, project)
}

/** Browsers send a textarea's newlines as CRLF: kept as the APIs would be sent them, LF. */
const lf = (text: string | undefined) => text?.replace(/\r\n/g, '\n')

export function commentPages(app: FastifyInstance) {
  const form = formPost(app)
  const boardOf = (project: string) => `/console/projects/${encodeURIComponent(project)}/opportunities`

  /**
   * Runs a comment form's operation: a refusal of the input (400) or of the state (409) is a
   * flash message on the page it came back to; no access (403) or nothing there (404) is an error page.
   */
  async function act(request: FastifyRequest, done: string, call: () => Promise<unknown>) {
    try {
      await call()
      flash(request, 'ok', done)
    } catch (err) {
      const status = (err as { statusCode?: number }).statusCode
      if (status !== 400 && status !== 409) throw err
      flash(request, 'error', `Not saved: ${describe(err)}`)
    }
  }

  app.get<{ Params: { project: string; id: string } }>('/console/projects/:project/opportunities/:id/comments', async (request, reply) => {
    const comments = await commentsFor(request, request.params.project, request.params.id)
    const project = await projectAccess(request, request.params.project)
    return reply.page('comments-page', { title: 'Comments', project, comments, back: request.url.split('#')[0] })
  })

  app.post<{ Params: { project: string; id: string } }>('/console/projects/:project/opportunities/:id/comments', form, async (request, reply) => {
    const body = request.body as Form
    const back = safeNext(body.back, boardOf(request.params.project))
    const args = { event_id: request.params.id, body: lf(body.body) ?? '', ...(body.parent_id ? { parent_id: body.parent_id } : {}) }
    await act(request, body.parent_id ? 'Reply added.' : 'Comment added.', () => run(request, addComment, args, request.params.project))
    return reply.redirect(`${back}#comments`, 303)
  })

  app.post<{ Params: { project: string; id: string } }>('/console/projects/:project/comments/:id/edit', form, async (request, reply) => {
    const body = request.body as Form
    const back = safeNext(body.back, boardOf(request.params.project))
    await act(request, 'Comment saved.', () => run(request, editComment, { comment_id: request.params.id, body: lf(body.body) ?? '' }, request.params.project))
    return reply.redirect(`${back}#${encodeURIComponent(request.params.id)}`, 303)
  })

  app.post<{ Params: { project: string; id: string } }>('/console/projects/:project/comments/:id/delete', form, async (request, reply) => {
    const body = request.body as Form
    const back = safeNext(body.back, boardOf(request.params.project))
    await act(request, 'Comment deleted.', () => run(request, deleteComment, { comment_id: request.params.id }, request.params.project))
    return reply.redirect(`${back}#comments`, 303)
  })
}

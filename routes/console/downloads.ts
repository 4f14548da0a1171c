// CSV downloads from the console: the review board's opportunities (with its filters), the
// daily metrics and the event summary. The same CSV as the API's, as the signed-in user, behind
// plain links (no script needed).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { dailyEventSummaryCsv, dailyOpsCsv, opportunitiesCsv, sendCsv, type CsvExport } from '../exports.ts'
import { describe, run, type Form } from './actions.ts'

/** The query's values for these names, an empty one left out (as the board's filter form sends it). */
const chosen = (query: Form, names: readonly string[]) =>
  Object.fromEntries(names.flatMap((n) => {
    const value = n === 'q' ? query[n]?.trim() : query[n]
    return typeof value === 'string' && value !== '' ? [[n, value]] : []
  }))

async function download(request: FastifyRequest<{ Params: { project: string } }>, reply: FastifyReply, e: CsvExport, args: Record<string, string>) {
  let result
  try {
    result = await run(request, e.op, args, request.params.project)
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode !== 400) throw err
    reply.code(400)
    return reply.page('error', { title: 'Bad filter', heading: 'That download does not work', message: describe(err) })
  }
  return sendCsv(reply, e, result)
}

export function downloadRoutes(app: FastifyInstance) {
  app.get<{ Params: { project: string } }>('/console/projects/:project/opportunities.csv', async (request, reply) =>
    download(request, reply, opportunitiesCsv, chosen(request.query as Form, ['type', 'date', 'evaluation', 'status', 'q', 'tag', 'assignee'])))
  app.get<{ Params: { project: string } }>('/console/projects/:project/metrics.csv', async (request, reply) =>
    download(request, reply, dailyOpsCsv, chosen(request.query as Form, ['window', 'from', 'to'])))
  app.get<{ Params: { project: string } }>('/console/projects/:project/event-summary.csv', async (request, reply) =>
    download(request, reply, dailyEventSummaryCsv, chosen(request.query as Form, ['window', 'from', 'to'])))
}

// One log line per request (app.ts, OneLinePerRequest): written when the request completes,
// with what Fastify's two default lines carried between them; LOG_REQUESTS=false drops it and
// keeps the errors.
import t, { type Test } from 'tap'
import { Writable } from 'node:stream'
import { buildApp, loggerOptions } from '../app.ts'
import { loadConfig } from '../config.ts'
import { bearer, seedWorkspace, testConfig, testDatabase } from './helpers/app.ts'

interface Line { level: number; msg: string; reqId?: string; req?: { method: string; url: string }; res?: { statusCode: number }; responseTime?: number; err?: { message: string } }

async function loggingApp(t: Test, logRequests: boolean | undefined) {
  const lines: Line[] = []
  let pending = ''
  const stream = new Writable({
    write(chunk, _encoding, done) {
      pending += String(chunk)
      const parts = pending.split('\n')
      pending = parts.pop()!
      for (const part of parts) lines.push(JSON.parse(part) as Line)
      done()
    },
  })
  const database = await testDatabase(t)
  const options = loggerOptions('info') as Exclude<ReturnType<typeof loggerOptions>, boolean | undefined>
  const app = await buildApp({ config: testConfig(database, { logLevel: 'info', ...(logRequests === undefined ? {} : { logRequests }) }), logger: { ...options, stream } as never })
  t.teardown(() => app.close())
  app.get('/broken', async () => {
    throw new Error('something internal broke')
  })
  const ws = await seedWorkspace(app)
  // The completion line is written once the response has ended, which may be after inject() resolved.
  const settled = () => new Promise((resolve) => setTimeout(resolve, 50))
  return { app, ws, lines, settled }
}

t.test('one line per request, at completion, with the request and its outcome', async (t) => {
  const { app, ws, lines, settled } = await loggingApp(t, undefined)
  lines.length = 0
  const ok = await app.inject({ method: 'GET', url: '/v1/projects', headers: bearer(ws.keys.service) })
  t.equal(ok.statusCode, 200)
  const secret = await app.inject({ method: 'GET', url: `/v1/projects?api_key=${ws.keys.service}`, headers: bearer(ws.keys.service) })
  t.equal(secret.statusCode, 400, 'an unknown query parameter')
  const refused = await app.inject({ method: 'GET', url: '/v1/projects' })
  t.equal(refused.statusCode, 401)
  // /health's route logs at warn: a health check every few seconds writes no line.
  t.equal((await app.inject({ method: 'GET', url: '/health' })).statusCode, 200)
  await settled()
  t.equal(lines.filter((l) => l.msg === 'incoming request').length, 0, 'no "incoming request" line')
  const completed = lines.filter((l) => l.msg === 'request completed')
  t.equal(completed.length, 3, 'one "request completed" line for each request, none for /health')
  t.notOk(completed.some((l) => l.req?.url === '/health'), 'no line for /health')
  const [first, second, third] = completed
  t.equal(first!.level, 30, 'at info')
  t.match(first!.req, { method: 'GET', url: '/v1/projects', host: 'localhost', remoteAddress: '127.0.0.1' }, 'the method, URL, host and address')
  t.equal(first!.res?.statusCode, 200, 'the status')
  t.type(first!.responseTime, 'number', 'the response time')
  t.type(first!.reqId, 'string', 'the request id')
  t.not(first!.reqId, second!.reqId, 'each request its own id')
  t.equal(second!.req?.url, '/v1/projects?api_key=%5Bredacted%5D', 'a credential in the URL redacted')
  t.equal(second!.res?.statusCode, 400)
  t.equal(third!.res?.statusCode, 401)
  t.notOk(JSON.stringify(lines).includes(ws.keys.service), 'no key in any line')
})

t.test('LOG_REQUESTS=false: no line for a request that went well, errors still logged', async (t) => {
  t.equal(loadConfig({}).logRequests, true, 'on by default')
  t.equal(loadConfig({ LOG_REQUESTS: 'false' }).logRequests, false)
  t.throws(() => loadConfig({ LOG_REQUESTS: 'no' }), /LOG_REQUESTS="no" — expected true or false/)
  const { app, ws, lines, settled } = await loggingApp(t, false)
  lines.length = 0
  t.equal((await app.inject({ method: 'GET', url: '/v1/projects', headers: bearer(ws.keys.service) })).statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url: '/broken' })).statusCode, 500)
  await settled()
  t.equal(lines.filter((l) => l.msg === 'request completed' || l.msg === 'incoming request').length, 0, 'no request lines')
  const failed = lines.filter((l) => l.level === 50)
  t.equal(failed.length, 1, 'the failure is logged at error')
  t.equal(failed[0]!.err?.message, 'something internal broke')
})

// A real crash between commit and delivery: the server process as `npm start` runs it (start.js,
// package.json's flags) on a database of its own — the embedded one in a temporary DATA_DIR, or
// a fresh PostgreSQL database when DATABASE_URL is set — is killed with SIGKILL while a committed
// message waits in the outbox, then started again on the same data; the message is delivered
// after the restart, once, signed (verified with `standardwebhooks`), and logged as succeeded.
//
// The receiver answers 500 while the first process runs: the message is attempted once and is
// due again in 5 s (the first step of the retry schedule), not held by the 60 s lease of a claim,
// so the restarted process delivers it within seconds. Nothing here waits on a timer: each step
// polls for what it expects, under one generous deadline.
import t from 'tap'
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import type { AddressInfo } from 'node:net'
import { Webhook as Verifier } from 'standardwebhooks'
import { testDatabase } from './helpers/app.ts'
import { serverEnv, startServer, until } from './helpers/server-process.ts'

const DEADLINE_MS = 100_000

interface Received { id: string; headers: http.IncomingHttpHeaders; body: string; answered: number }

t.test('a message committed before a kill -9 is delivered once after the restart', async (t) => {
  const deadline = Date.now() + DEADLINE_MS
  const database = await testDatabase(t)
  // DATA_DIR: on PostgreSQL the secrets key file, which the restart must find again to open the
  // webhook's sealed signing secret.
  const env = serverEnv(t, database, 'whcrash', { WEBHOOKS_ENABLED: 'true', WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true' })
  const dataDir = env.DATA_DIR!

  // The receiver: 500 to everything while `failing`, then 200.
  let failing = true
  const got: Received[] = []
  const rx = http.createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => (body += chunk))
    req.on('end', () => {
      const answered = failing ? 500 : 200
      got.push({ id: String(req.headers['webhook-id']), headers: req.headers, body, answered })
      res.writeHead(answered, { 'content-type': 'text/plain' }).end(failing ? 'down' : 'ok')
    })
  })
  await new Promise<void>((resolve) => rx.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => {
    rx.closeAllConnections()
    rx.close(() => resolve())
  }))
  const hookUrl = `http://127.0.0.1:${(rx.address() as AddressInfo).port}/hook`

  // First process: the first start's banner gives the service key and the project.
  const first = startServer(env)
  t.teardown(() => first.child.kill('SIGKILL'))
  const url1 = await first.url(deadline)
  t.equal(fs.statSync(path.join(dataDir, 'secrets.key')).mode & 0o777, 0o600, 'the first start made the secrets key file, readable by its owner only')
  const key = /service:\s+(gds_\S+)/.exec(first.output())?.[1]
  const project = /project:\s+\S+ \((prj_\w+)\)/.exec(first.output())?.[1]
  t.ok(key && project, 'the first start printed a service key and a project')
  const api = (base: string) => async (method: string, route: string, payload?: unknown) => {
    const res = await fetch(`${base}${route}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(payload ? { 'content-type': 'application/json' } : {}) },
      body: payload ? JSON.stringify(payload) : undefined,
    })
    return { status: res.status, body: (await res.json()) as any }
  }
  const call1 = api(url1)

  const created = await call1('POST', '/v1/webhooks', { project, url: hookUrl, events: ['opportunity.submitted'], description: 'crash test' })
  t.equal(created.status, 201, created.status === 201 ? 'subscribed' : JSON.stringify(created.body))
  const hook = created.body as { id: string; secret: string }
  const submitted = await call1('POST', '/v1/tools/submit_opportunity', { project, contribution_type: 'partnership', key_information: 'Lead before the crash', reason: 'inbound', suggested_action: 'reply' })
  t.equal(submitted.status, 200, submitted.status === 200 ? 'submitted' : JSON.stringify(submitted.body))

  // Committed, attempted once (500) and not delivered: pending, due again after the backoff.
  type Delivery = { id: string; status: string; attempts: number; next_attempt_at: string | null; last_status_code: number | null }
  const log = async (call: typeof call1) => {
    const res = await call('GET', `/v1/webhooks/${hook.id}/deliveries`)
    if (res.status !== 200) throw new Error(`deliveries: ${res.status} ${JSON.stringify(res.body)}`)
    return res.body as { items: Delivery[]; total: number }
  }
  const before = await until('a failed first attempt', async () => {
    const { items } = await log(call1)
    return items[0]?.last_status_code === 500 ? items : undefined
  }, deadline)
  t.equal(before.length, 1, 'one message recorded')
  const message = before[0]!
  t.match(message, { id: /^msg_/, status: 'pending', attempts: 1, last_status_code: 500 }, 'recorded, not delivered')
  t.ok(message.next_attempt_at && new Date(message.next_attempt_at) > new Date(), 'due again later')
  t.ok(got.length >= 1 && got.every((r) => r.id === message.id && r.answered === 500), 'the receiver saw only failed attempts of that message')

  // kill -9: no shutdown hook runs.
  process.kill(first.child.pid!, 'SIGKILL')
  await first.exited
  t.equal(first.child.signalCode, 'SIGKILL', 'the first process was killed')
  const beforeRestart = got.length

  // Second process on the same data; the receiver now answers 200.
  failing = false
  const second = startServer(env)
  t.teardown(() => second.child.kill('SIGKILL'))
  const url2 = await second.url(deadline)
  t.notMatch(second.output(), /first start/, 'the restart found the data of the first process')
  const call2 = api(url2)
  const after = await until('the delivery to succeed', async () => {
    const { items } = await log(call2)
    return items[0]?.status === 'succeeded' ? items : undefined
  }, deadline)
  t.equal(after.length, 1)
  t.match(after[0], { id: message.id, status: 'succeeded', last_status_code: 200, next_attempt_at: null })

  const delivered = got.slice(beforeRestart).filter((r) => r.answered === 200)
  t.equal(delivered.length, 1, 'delivered once after the restart')
  t.equal(got.slice(beforeRestart).length, 1, 'and attempted only once by the second process')
  const d = delivered[0]!
  t.equal(d.id, message.id, 'with the same webhook-id')
  const payload = new Verifier(hook.secret).verify(d.body, d.headers as Record<string, string>) as { type: string; data: { key_information: string } }
  t.equal(payload.type, 'opportunity.submitted')
  t.equal(payload.data.key_information, 'Lead before the crash')

  await fetch(`${url2}/health`)
  second.child.kill('SIGTERM')
  await second.exited
})

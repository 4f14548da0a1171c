// A webhook receiver on a loopback port, and a subscription to it, for the webhook suites.
import http from 'node:http'
import { createPublicKey, verify } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import type { Config } from '../../config.ts'
import { bearer } from './app.ts'

/** Webhooks may reach loopback receivers; the delivery worker is driven by the test. */
export const privateOk: Partial<Config> = { webhooks: { enabled: false, allowPrivateNetworks: true } }

export interface Received { path: string; headers: http.IncomingHttpHeaders; body: string }

/** An answer of a receiver: a status, or a status with headers of its own (Retry-After). */
export type Answer = number | { status: number; headers: Record<string, string> }

/** A receiver on a loopback port answering with `statuses` in turn (then 200); what it got. */
export async function receiver(t: Test, statuses: Answer[] = []) {
  const got: Received[] = []
  const waiters: (() => void)[] = []
  const server = http.createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => (body += chunk))
    req.on('end', () => {
      got.push({ path: req.url ?? '', headers: req.headers, body })
      const answer = statuses[got.length - 1] ?? 200
      const status = typeof answer === 'number' ? answer : answer.status
      const headers: Record<string, string> = { 'content-type': 'text/plain', ...(typeof answer === 'number' ? {} : answer.headers) }
      if (status >= 300 && status < 400) headers.location = '/elsewhere'
      res.writeHead(status, headers).end(status >= 300 ? 'x'.repeat(5000) : 'ok')
      for (const w of waiters.splice(0)) w()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  }))
  const { port } = server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}/hook`, got, next: () => new Promise<void>((resolve) => waiters.push(resolve)) }
}

export async function subscribe(app: FastifyInstance, key: string, project: string, url: string, events: string[]) {
  const res = await app.inject({ method: 'POST', url: '/v1/webhooks', headers: bearer(key), payload: { project, url, events, description: 'test' } })
  if (res.statusCode !== 201) throw new Error(`subscribe: ${res.statusCode} ${res.body}`)
  return res.json() as { id: string; secret: string }
}

/** Does `msg` carry a v1a signature that `publicKey` (whpk_…) verifies? */
export function verifiesV1a(msg: Received, publicKey: string): boolean {
  const raw = Buffer.from(publicKey.replace(/^whpk_/, ''), 'base64')
  const key = createPublicKey({ format: 'jwk', key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') } })
  const signed = Buffer.from(`${msg.headers['webhook-id']}.${msg.headers['webhook-timestamp']}.${msg.body}`)
  return String(msg.headers['webhook-signature']).split(' ').some((s) => {
    const [version, signature] = s.split(',')
    return version === 'v1a' && verify(null, signed, key, Buffer.from(signature!, 'base64'))
  })
}

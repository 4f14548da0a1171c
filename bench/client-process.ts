// The parent's side of bench/client.ts: the load generator runs in a child process of its own,
// so the server's event loop (in the bench process) does only server work.
import { fork, type ChildProcess } from 'node:child_process'
import net from 'node:net'
import os from 'node:os'
import type { ClientReply, ClientTask } from './client.ts'

export class Client {
  private readonly child: ChildProcess
  constructor() {
    // The same Node flags as this process (Node strips the child's types as it does ours).
    this.child = fork(new URL('./client.ts', import.meta.url).pathname, [], { execArgv: process.execArgv, stdio: 'inherit' })
  }

  run<T>(task: ClientTask): Promise<T> {
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`the client process exited (${code}) during ${task.kind}`))
      this.child.once('exit', onExit)
      this.child.once('message', (reply: ClientReply<T>) => {
        this.child.off('exit', onExit)
        if (reply.ok) resolve(reply.result)
        else reject(new Error(`client ${task.kind}: ${reply.error}`))
      })
      this.child.send(task)
    })
  }

  close() {
    if (this.child.connected) this.child.disconnect()
    if (this.child.exitCode === null) this.child.kill()
  }
}

/** The 1-, 5- and 15-minute load averages, as `uptime` prints them. */
export function loadAverage(): string {
  return os.loadavg().map((n) => n.toFixed(2)).join(', ')
}

/** A parser of numeric command-line options: a value in range, or the usage and exit code 2. */
export function numericOption(usage: string, options: { integer?: boolean } = {}) {
  const what = options.integer ? 'an integer' : 'a number'
  return (name: string, value: string | undefined, min: number, max: number): number => {
    const n = Number(value)
    if (!(options.integer ? Number.isInteger(n) : Number.isFinite(n)) || n < min || n > max) {
      process.stderr.write(`--${name} must be ${what} from ${min} to ${max} (got ${JSON.stringify(value)}).\n\n${usage}`)
      process.exit(2)
    }
    return n
  }
}

/** The median of some figures (the mean of the middle two when there is an even number). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** A free loopback port (briefly bound, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => resolve(port))
    })
  })
}

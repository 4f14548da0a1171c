// A server for an HTTP bench, started the way `npm start` starts the app: this Node, the flags
// of package.json's start script read at run time (not a copy: another change to them is
// measured as it ships), in a process of its own whose CPU time is read from /proc. The app
// runs start.js with its default logging (its stdout and stderr go to a file, as a service
// manager would take them); the reference server (bench/reference-server.ts) runs under the
// same flags. Env: the caller's, less LOG_LEVEL (the default level is what ships), plus `env`.
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { processCpuMs } from './cpu.ts'

const root = path.join(import.meta.dirname, '..')

/** `npm start`'s Node flags and script: package.json's start script, `node <flags> <script>`. */
export function npmStart(): { flags: string[]; script: string; command: string } {
  const command = (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start
  const words = command.trim().split(/\s+/)
  if (words[0] !== 'node' || words.length < 2 || words.at(-1)!.startsWith('-')) throw new Error(`package.json's start script is not "node <flags> <script>": ${command}`)
  return { flags: words.slice(1, -1), script: words.at(-1)!, command }
}

export interface ServerProcess {
  pid: number
  origin: string
  /** The file its stdout and stderr go to. */
  logFile: string
  /** utime + stime of the process, in ms. */
  cpuMs(): number
  /** VmRSS in bytes (0 once gone). */
  rss(): number
  alive(): boolean
  stop(): Promise<void>
}

/**
 * Starts `script` (default: npm start's) with npm start's flags, on `port`, and waits until GET
 * /health answers 200 (at most `timeoutMs`). Throws, with the log's tail, if the process exits first.
 * `cpuProf`: a folder, where the process (under Node's --cpu-prof) writes its profile as it exits.
 */
export async function startServer(options: { port: number; env: Record<string, string>; logFile: string; script?: string; timeoutMs?: number; cpuProf?: string }): Promise<ServerProcess> {
  const { flags, script } = npmStart()
  if (options.cpuProf !== undefined) flags.push('--cpu-prof', `--cpu-prof-dir=${path.resolve(options.cpuProf)}`)
  const env: NodeJS.ProcessEnv = { ...process.env }
  delete env.LOG_LEVEL
  const out = fs.openSync(options.logFile, 'a')
  const child: ChildProcess = spawn(process.execPath, [...flags, options.script ?? script], {
    cwd: root,
    env: { ...env, ...options.env, PORT: String(options.port) },
    stdio: ['ignore', out, out],
  })
  fs.closeSync(out)
  const origin = `http://127.0.0.1:${options.port}`
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const alive = () => child.exitCode === null && child.signalCode === null
  const server: ServerProcess = {
    pid: child.pid!,
    origin,
    logFile: options.logFile,
    cpuMs: () => processCpuMs(child.pid!) ?? NaN,
    rss() {
      try {
        return Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0) * 1024
      } catch {
        return 0
      }
    },
    alive,
    async stop() {
      if (!alive()) return
      child.kill('SIGTERM')
      await exited
    },
  }
  const deadline = Date.now() + (options.timeoutMs ?? 60_000)
  for (;;) {
    if (!alive()) throw new Error(`${options.script ?? script} exited (${child.exitCode ?? child.signalCode}) before answering /health:\n${tail(options.logFile)}`)
    if (await fetch(`${origin}/health`).then((r) => r.ok, () => false)) return server
    if (Date.now() > deadline) {
      await server.stop()
      throw new Error(`${options.script ?? script} did not answer /health within ${options.timeoutMs ?? 60_000} ms:\n${tail(options.logFile)}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

function tail(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-20).join('\n')
  } catch {
    return '(no log)'
  }
}

// An operation is defined once — name, description, TypeBox input and output, the role it
// needs, its handler — and every surface (REST routes, /v1/tools, MCP) reaches it here.
import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox'
import type { ValidateFunction } from 'ajv'
import type { FastifyBaseLogger } from 'fastify'
import type { Principal, ProjectAccess } from './access.ts'
import { roleAtLeast } from './access.ts'
import { appError, detailsFromValidation, invalidArguments } from './errors.ts'
import { strictAjv } from './validation.ts'
import { ProjectRef, type Role } from '../schemas/atoms.ts'
import type { Repositories } from '../db/repositories/index.ts'

export interface Annotations {
  readOnlyHint: boolean
  destructiveHint: boolean
  idempotentHint: boolean
  openWorldHint?: boolean
}

interface Context {
  principal: Principal
  repos: Repositories
  log: FastifyBaseLogger
  now: () => Date
  registry: Registry
}
export type WorkspaceContext = Context
export type ProjectContext = Context & { project: ProjectAccess }

interface OperationBase<I extends TObject, O extends TSchema> {
  name: string
  title: string
  /** Written for an agent: what it does, when to use it, what it returns. */
  description: string
  input: I
  output: O
  role: Role
  annotations: Annotations
  /** false: reachable only through its own REST route, not listed or callable as a tool. */
  tool?: boolean
}

export interface ProjectOperation<I extends TObject = TObject, O extends TSchema = TSchema> extends OperationBase<I, O> {
  scope: 'project'
  handler(args: Static<I>, ctx: ProjectContext): Promise<Static<O>>
}
export interface WorkspaceOperation<I extends TObject = TObject, O extends TSchema = TSchema> extends OperationBase<I, O> {
  scope: 'workspace'
  handler(args: Static<I>, ctx: WorkspaceContext): Promise<Static<O>>
}
export type Operation = ProjectOperation<any, any> | WorkspaceOperation<any, any>

export function defineOperation<I extends TObject, O extends TSchema>(op: ProjectOperation<I, O>): ProjectOperation<I, O>
export function defineOperation<I extends TObject, O extends TSchema>(op: WorkspaceOperation<I, O>): WorkspaceOperation<I, O>
export function defineOperation(op: Operation): Operation {
  return op
}

/** The published contract of a tool: arguments include `project` for project tools. */
export interface ToolContract {
  name: string
  title: string
  description: string
  input_schema: TObject
  output_schema: TSchema
  annotations: Annotations & { title: string }
}

interface Entry {
  op: Operation
  contract: ToolContract
  validate: ValidateFunction
}

export interface CallOptions {
  principal: Principal
  /** Project from the path or the X-Service-Project header; `args.project` wins. */
  projectRef?: string
  log: FastifyBaseLogger
  /** The caller has checked the tool is enabled for the workspace (REST routes skip it). */
  asTool?: boolean
}

/** PostgreSQL text cannot hold U+0000: find it anywhere in the arguments (keys too) first. */
function findNul(value: unknown, path: string): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findNul(value[i], `${path}[${i}]`)
      if (found !== null) return found
    }
    return null
  }
  if (value && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      const here = path ? `${path}.${key}` : key
      if (key.includes('\u0000')) return here
      const found = findNul(v, here)
      if (found !== null) return found
    }
  }
  return null
}

function stripIds(schema: TSchema): TSchema {
  return JSON.parse(JSON.stringify(schema, (key, value) => (key === '$id' || key === '$schema' ? undefined : value)))
}

export class Registry {
  private readonly entries = new Map<string, Entry>()

  private readonly deps: { repos: Repositories; now: () => Date }
  constructor(deps: { repos: Repositories; now: () => Date }) {
    this.deps = deps
  }

  add(op: Operation): void {
    if (this.entries.has(op.name)) throw new Error(`Operation ${op.name} is defined twice`)
    const input =
      op.scope === 'project'
        ? Type.Object({ project: Type.Optional(ProjectRef), ...op.input.properties }, {
          additionalProperties: false,
          ...(op.input.description ? { description: op.input.description } : {}),
        })
        : op.input
    const contract: ToolContract = {
      name: op.name,
      title: op.title,
      description: op.description,
      input_schema: stripIds(input) as TObject,
      output_schema: stripIds(op.output),
      annotations: { title: op.title, ...op.annotations },
    }
    this.entries.set(op.name, { op, contract, validate: strictAjv.compile(contract.input_schema) })
  }

  contract(name: string): ToolContract | undefined {
    return this.entries.get(name)?.contract
  }

  /** The tools (operations exposed as tools) minus those disabled in a workspace. */
  contracts(disabled: readonly string[] = []): ToolContract[] {
    return [...this.entries.values()]
      .filter((e) => e.op.tool !== false && !disabled.includes(e.op.name))
      .map((e) => e.contract)
  }

  /** Names of every tool, enabled or not. */
  names(): string[] {
    return [...this.entries.values()].filter((e) => e.op.tool !== false).map((e) => e.op.name)
  }

  /** Validates the arguments, resolves the project and the caller's role, runs the handler. */
  async call(name: string, rawArgs: unknown, options: CallOptions): Promise<unknown> {
    const entry = this.entries.get(name)
    if (!entry || (options.asTool && entry.op.tool === false)) throw appError('NotFound', `There is no tool named '${name}'.`)
    if (options.asTool) {
      const disabled = await this.deps.repos.workspaces.disabledTools(options.principal.workspaceId)
      if (disabled.includes(name)) throw appError('NotFound', `There is no tool named '${name}' enabled in this workspace.`)
    }
    const args = structuredClone(rawArgs ?? {}) as Record<string, unknown>
    if (typeof args !== 'object' || Array.isArray(args)) {
      throw invalidArguments([{ path: '', message: 'must be a JSON object of arguments' }])
    }
    const nul = findNul(args, '')
    if (nul !== null) throw invalidArguments([{ path: nul, message: 'must not contain the NUL character (\\u0000)' }])
    if (!entry.validate(args)) throw invalidArguments(detailsFromValidation(entry.validate.errors ?? []))
    const { op } = entry
    const ctx: Context = { principal: options.principal, repos: this.deps.repos, log: options.log, now: this.deps.now, registry: this }
    if (op.scope === 'workspace') return op.handler(args as never, ctx)

    const ref = (args.project as string | undefined) ?? options.projectRef
    delete args.project
    if (!ref) {
      throw invalidArguments(
        [{ path: 'project', message: 'is required: send `project` (id or slug) or the X-Service-Project header' }],
        `The tool '${name}' needs a project: send \`project\` (id or slug) in the arguments or the X-Service-Project header.`
      )
    }
    const project = await this.deps.repos.projects.access(options.principal, ref)
    if (!project) throw appError('NotFound', `Project '${ref}' was not found.`)
    if (!roleAtLeast(project.role, op.role)) {
      throw op.role === 'reviewer'
        ? appError('ReviewAccessRequired', `This needs review access to project '${project.slug}'; your access is ${project.role}.`)
        : appError('Forbidden', `This needs the ${op.role} role in project '${project.slug}'; your access is ${project.role}.`)
    }
    return op.handler(args as never, { ...ctx, project })
  }
}

// Projects and memories over REST (spec 4.2): each route is an operation of the registry.
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ProjectRef } from '../schemas/atoms.ts'
import { MemoryId } from '../schemas/memories.ts'
import { responses } from './responses.ts'
import listProjects from '../tools/list-projects.ts'
import createProject from '../tools/create-project.ts'
import getProject from '../tools/get-project.ts'
import updateProject, { ProjectCardPatch } from '../tools/update-project.ts'
import listMemories from '../tools/list-memories.ts'
import addMemory from '../tools/add-memory.ts'
import updateMemory, { MemoryPatch } from '../tools/update-memory.ts'
import forgetMemory from '../tools/forget-memory.ts'
import { listWorkspaceTools, setToolEnabled } from '../tools/workspace-tools.ts'

const Project = Type.Object({ project: ProjectRef })
const Id = Type.Object({ id: MemoryId })
const security = [{ bearer: [] }]
const doc = (op: { title: string; description: string }, tag: string) => ({ tags: [tag], security, summary: op.title, description: op.description })

const projectRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.authenticate('tools-api'))

  app.get('/projects', { schema: { ...doc(listProjects, 'projects'), response: responses(listProjects.output) } }, (req) =>
    req.operate(listProjects, {})
  )

  app.post('/projects', { schema: { ...doc(createProject, 'projects'), body: createProject.input, response: { ...responses(createProject.output), 201: createProject.output } } },
    async (req, reply) => reply.code(201).send(await req.operate(createProject, req.body))
  )

  app.get('/projects/:project', { schema: { ...doc(getProject, 'projects'), params: Project, response: responses(getProject.output) } }, (req) =>
    req.operate(getProject, {}, req.params.project)
  )

  app.patch('/projects/:project', { schema: { ...doc(updateProject, 'projects'), params: Project, body: ProjectCardPatch, response: responses(updateProject.output) } },
    (req) => req.operate(updateProject, req.body, req.params.project)
  )

  app.get('/projects/:project/memories', { schema: { ...doc(listMemories, 'memories'), params: Project, querystring: listMemories.input, response: responses(listMemories.output) } },
    (req) => req.operate(listMemories, req.query, req.params.project)
  )

  app.post('/projects/:project/memories', { schema: { ...doc(addMemory, 'memories'), params: Project, body: addMemory.input, response: { ...responses(addMemory.output), 201: addMemory.output } } },
    async (req, reply) => reply.code(201).send(await req.operate(addMemory, req.body, req.params.project))
  )

  app.patch('/memories/:id', { schema: { ...doc(updateMemory, 'memories'), params: Id, body: MemoryPatch, response: responses(updateMemory.output) } }, (req) =>
    req.operate(updateMemory, { ...req.body, id: req.params.id })
  )

  app.delete('/memories/:id', { schema: { ...doc(forgetMemory, 'memories'), params: Id, response: responses(forgetMemory.output) } }, (req) =>
    req.operate(forgetMemory, { id: req.params.id })
  )

  app.get('/workspace/tools', { schema: { ...doc(listWorkspaceTools, 'workspace'), response: responses(listWorkspaceTools.output) } }, (req) =>
    req.operate(listWorkspaceTools, {})
  )

  app.put('/workspace/tools/:name', {
    schema: { ...doc(setToolEnabled, 'workspace'), params: Type.Object({ name: Type.String() }), body: Type.Object({ enabled: Type.Boolean() }, { additionalProperties: false }), response: responses(setToolEnabled.output) },
  }, (req) => req.operate(setToolEnabled, { name: req.params.name, enabled: req.body.enabled }))
}

export default projectRoutes

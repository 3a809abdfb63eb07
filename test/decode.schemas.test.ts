// The decoder gets its schemas handed in by Message.ts (no lazy building around an import cycle): every `type` of
// `StdoutMessage` must be in that table, or its frames would decode as `unknown_type`.
import { describe, expect, it } from "vitest"
import * as AST from "effect/SchemaAST"
import { Message } from "effect-claude-agent"

/** The `type` literals a union member requires (a member that is itself a union contributes its members'). */
const typesOf = (ast: AST.AST): ReadonlyArray<string> => {
  if (ast._tag === "Union") return ast.types.flatMap(typesOf)
  if (ast._tag === "Transformation") return typesOf(ast.to)
  if (ast._tag !== "TypeLiteral") return []
  const type = ast.propertySignatures.find((p) => p.name === "type")?.type
  return type?._tag === "Literal" && typeof type.literal === "string" ? [type.literal] : []
}

describe("Message.decode's schema table", () => {
  it("knows every type of StdoutMessage", () => {
    const types = [...new Set(typesOf(AST.typeAST(Message.StdoutMessage.ast)))].filter((t) => t !== "unknown")
    expect(types.length).toBeGreaterThan(10)
    const unknownTypes = types.filter((type) => {
      const decoded = Message.decode({ type })
      return decoded.type === "unknown" && decoded.reason === "unknown_type"
    })
    expect(unknownTypes).toEqual([])
  })
})

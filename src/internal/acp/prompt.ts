/**
 * An ACP prompt as the content of the user message sent to the CLI: text as text, images as images, embedded
 * resources (the editor's context: a file, a selection) as text wrapped in a `<context>` tag naming its URI, links to
 * resources as `@`-mentions the model can read, PDFs as documents. Audio is not accepted (the `initialize` answer says
 * so): a prompt with audio is refused with `invalid params` before anything is sent.
 *
 * @internal
 */
import * as Either from "effect/Either"
import type * as Message from "../../Message.js"
import type { ContentBlock } from "./schema.js"

/** A `file://` URI as a path; other URIs as they are. */
const uriPath = (uri: string): string => {
  if (!uri.startsWith("file://")) return uri
  try {
    return decodeURIComponent(new URL(uri).pathname)
  } catch {
    return uri
  }
}

/** The content blocks of an ACP prompt, or why it cannot be sent. @internal */
export const toContent = (
  prompt: ReadonlyArray<ContentBlock>
): Either.Either<ReadonlyArray<Message.ContentBlock>, string> => {
  const out: Array<Message.ContentBlock> = []
  for (const block of prompt) {
    switch (block.type) {
      case "text":
        out.push({ type: "text", text: block.text })
        break
      case "image":
        out.push({ type: "image", source: { type: "base64", media_type: block.mimeType, data: block.data } })
        break
      case "audio":
        return Either.left("audio prompts are not supported (promptCapabilities.audio is false)")
      case "resource_link":
        out.push({ type: "text", text: `@${uriPath(block.uri)}` })
        break
      case "resource": {
        const resource = block.resource
        if ("text" in resource) {
          out.push({
            type: "text",
            text: `<context ref=${JSON.stringify(resource.uri)}>\n${resource.text}\n</context>`
          })
        } else if (resource.mimeType?.startsWith("image/") === true) {
          out.push({ type: "image", source: { type: "base64", media_type: resource.mimeType, data: resource.blob } })
        } else if (resource.mimeType === "application/pdf") {
          out.push({ type: "document", source: { type: "base64", media_type: "application/pdf", data: resource.blob } })
        } else {
          return Either.left(
            `an embedded resource of type ${resource.mimeType ?? "unknown"} (${resource.uri}) cannot be sent: ` +
              "text, images and PDFs can"
          )
        }
        break
      }
    }
  }
  return out.length === 0 ? Either.left("the prompt is empty") : Either.right(out)
}

import { addEqualityTesters } from "@effect/vitest"
import { afterAll, expect } from "vitest"

addEqualityTesters()

// G4: nothing the SDK does may produce an unhandled rejection or a listener-leak warning, in any test file
const unhandled: Array<unknown> = []
const warnings: Array<string> = []
process.on("unhandledRejection", (reason) => {
  unhandled.push(reason)
})
process.on("warning", (warning) => {
  if (warning.name === "MaxListenersExceededWarning") warnings.push(warning.message)
})

afterAll(() => {
  expect(unhandled, "unhandled rejections during this file").toEqual([])
  expect(warnings, "MaxListenersExceededWarning during this file").toEqual([])
})

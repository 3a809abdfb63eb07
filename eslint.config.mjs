// Lint rules for the sources, tests, examples, scripts and bench. Layout is dprint's job (dprint.json, `npm run format`).
import * as effectEslint from "@effect/eslint-plugin"
import js from "@eslint/js"
import globals from "globals"
import tseslint from "typescript-eslint"

export default tseslint.config(
  { ignores: ["**/node_modules", "dist", "coverage", "docs/api", ".tmp", "bench/_*.mjs"] },
  { linterOptions: { reportUnusedDisableDirectives: "error" } },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    languageOptions: {
      globals: globals.node,
      // typed rules (no-floating-promises) read the types of tsconfig.json's program
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname }
    },
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/consistent-type-imports": ["error", {
        disallowTypeAnnotations: false,
        fixStyle: "inline-type-imports"
      }],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-implied-eval": "error",
      "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: false }],
      "@typescript-eslint/array-type": ["error", { default: "generic", readonly: "generic" }],
      // the Bash grammar's Emscripten module is typed by a local declaration file
      "@typescript-eslint/triple-slash-reference": ["error", { path: "always", types: "prefer-import", lib: "always" }],
      "@typescript-eslint/no-namespace": "off",
      "require-yield": "off",
      "object-shorthand": "error",
      // a `let` read by a finalizer or callback before its one assignment stays a `let`
      "prefer-const": ["error", { ignoreReadBeforeAssign: true }]
    }
  },
  {
    // the library never writes to stdout; it imports Effect modules deeply (STYLE.md: module layout)
    files: ["src/**/*.ts"],
    plugins: { "@effect": effectEslint },
    rules: {
      "no-console": "error",
      "@effect/no-import-from-barrel-package": ["error", {
        packageNames: ["effect", "@effect/platform", "@effect/platform-node"]
      }]
    }
  },
  {
    // a green test run prints nothing; the stress reports disable this where they print their figures
    files: ["test/**/*.ts"],
    rules: { "no-console": "error" }
  },
  {
    files: ["**/*.{js,mjs,cjs}"],
    extends: [tseslint.configs.disableTypeChecked]
  }
)

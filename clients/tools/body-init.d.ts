// The generated fetch client (clients/typescript/src/generated) names BodyInit, a DOM type. The client's
// own tsconfig has the DOM library; the root project, which type-checks the specs and e2e tests that
// import the client's sources, has Node's types only, so it takes undici's (what Node's fetch is).
type BodyInit = import('undici-types').BodyInit;

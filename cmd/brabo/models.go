package main

// modelMore is what brabo agent -h says of the models.
const modelMore = `The model (--model or BRABO_MODEL):
  openai:<model>     OPENAI_API_KEY; OPENAI_BASE_URL for any OpenAI-compatible server
  anthropic:<model>  ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL)
  scripted:<path>    a JSON script of assistant turns (tests, the demo)
A missing key variable is refused at start, naming it.`

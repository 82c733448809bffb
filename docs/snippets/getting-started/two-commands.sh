bash scripts/main.sh   # install, deploy the sample app to a local AWS emulator, run the scenario, tear down
bash scripts/test.sh   # install, then ruff and the whole test suite (the docs site's strict build included)

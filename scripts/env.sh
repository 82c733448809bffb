# Sourced by main.sh and test.sh, after setup.sh: the environment both run their Python in.
# Node 20 is supported by this project: no jsii end-of-life banner at every synth.
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20
# setup.sh installs without byte-compiling: Python caches each module when first imported (in .venv and the
# checkout's __pycache__, both ignored by git). With PYTHONDONTWRITEBYTECODE set it could not, and every
# process that imports aws-cdk-lib would compile it again from source: about 8 CPU s each time.
unset PYTHONDONTWRITEBYTECODE

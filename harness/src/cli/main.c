/* mtpcheck's entry point; everything else is in the libraries. */
int mtp_cli_main(int argc, char **argv);

int main(int argc, char **argv)
{
	return mtp_cli_main(argc, argv);
}
